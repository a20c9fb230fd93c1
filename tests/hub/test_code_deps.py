"""`ctx deps`: imports resolved to the files of the tree (issue 20)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctx.hub.code.chunking import python_modules
from ctx.hub.code.deps import dependencies
from ctx.hub.code.index import CodeIndex
from ctx.hub.retrieval.embedders import make_embedder

FILES = {
    "src/app/__init__.py": "",
    "src/app/main.py": (
        "import json\n"
        "import app.config\n"
        "from . import util\n"
        "from .models import User\n"
        "from app.services import mailer, Missing\n"
        "from ..outside import nothing\n"
    ),
    "src/app/util.py": "def helper():\n    pass\n",
    "src/app/models.py": "from .util import helper\n\n\nclass User:\n    pass\n",
    "src/app/config.py": (
        "DEBUG = False\n\n\n"
        "def reload():\n"
        "    from app import models  # late, to break the cycle\n"
        "    return models\n"
    ),
    "src/app/services/__init__.py": "",
    "src/app/services/mailer.py": "import smtplib\n",
    "tools/json.py": "# a stray module: not the standard library's json\n",
    "tools/run.py": "import json\nimport app.util\n",
    "web/main.ts": (
        'import { helper } from "./lib/util.js";\n'
        'import shared from "../shared";\n'
        'import React from "react";\n'
    ),
    "web/lib/util.ts": "export function helper() {}\n",
    "shared/index.ts": "export default 1;\n",
}


@pytest.fixture
def index(tmp_path: Path) -> CodeIndex:
    root = tmp_path / "tree"
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    index = CodeIndex(tmp_path / "code", lambda: make_embedder({"kind": "hashing"}))
    index.update(root, vectors=False)
    return index


def test_python_imports_are_found_as_python_would(index):
    main = dependencies(index, "src/app/main.py")
    assert main.resolved == (
        "src/app/config.py",  # import app.config, from the file's own root
        "src/app/__init__.py",  # from . import ...
        "src/app/util.py",  # ... util, a submodule
        "src/app/models.py",
        "src/app/services/__init__.py",
        "src/app/services/mailer.py",
    )  # json is not tools/json.py; Missing and ..outside name no file
    assert "app.services.mailer" in main.imports
    # A script outside the package finds it through the folder that holds it.
    assert dependencies(index, "tools/run.py").resolved == (
        "tools/json.py",  # the script's own folder is on its import path
        "src/app/util.py",
    )
    assert dependencies(index, "src/app/util.py").imported_by == (
        "src/app/main.py",
        "src/app/models.py",
        "tools/run.py",
    )


def test_an_import_inside_a_function_is_a_dependency_too(index):
    config = dependencies(index, "src/app/config.py")
    assert "app.models" in config.imports
    assert "src/app/models.py" in config.resolved
    assert "src/app/config.py" in dependencies(index, "src/app/models.py").imported_by


def test_script_imports_resolve_relative_paths_and_typescript_files(index):
    assert dependencies(index, "web/main.ts").resolved == (
        "web/lib/util.ts",  # written ./lib/util.js, as TypeScript reads it
        "shared/index.ts",
    )
    assert dependencies(index, "shared/index.ts").imported_by == ("web/main.ts",)


@pytest.mark.parametrize(
    ("statement", "modules"),
    [
        ("import a.b, c as d", ["a.b", "c"]),
        ("from . import util, models as m", [".", ".util", ".models"]),
        ("from .pkg import (a,\n    b,  # why\n)", [".pkg", ".pkg.a", ".pkg.b"]),
        ("from x.y import *", ["x.y"]),
        ("from .. import z", ["..", "..z"]),
    ],
)
def test_python_import_statements_name_their_modules(statement, modules):
    assert python_modules(statement) == modules
