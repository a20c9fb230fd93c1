"""What the hook tests share: recorded host inputs, a hook's context, a memory added.

The recorded inputs are ``tests/fixtures/hooks/*.json``, as each host sends
them; :func:`context` runs a hook on one and checks the frame of what it
gives back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctx import engine
from ctx.engine import Draft, Intent, Store
from ctx.porcelain.hooks import MAX_CONTEXT, find_event, run_hook

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"
SESSION = "9f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
OWNER = Intent(agent="tester", intent="observe")


def payload(name: str, cwd: Path, **changes: object) -> bytes:
    """A recorded host input, run in ``cwd``."""
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    data["cwd"] = str(cwd)
    data.update(changes)
    return json.dumps(data).encode()


def context(event: str, name: str, cwd: Path, **changes: object) -> str | None:
    """Runs a hook; returns the context it gives (None: no output)."""
    out = run_hook(event, payload(name, cwd, **changes))
    if not out:
        return None
    answer = json.loads(out)
    specific = answer["hookSpecificOutput"]
    assert set(answer) == {"hookSpecificOutput"}
    found = find_event(event)
    assert found is not None
    recorded = json.loads((FIXTURES / f"{name}.json").read_text())
    assert specific["hookEventName"] == recorded["hook_event_name"]
    text = specific["additionalContext"]
    assert len(text) <= MAX_CONTEXT
    assert text.startswith(f'<ctx:context source="{found.name}">\n')
    assert text.endswith("\n</ctx:context>")
    return text


def add(root: Path, text: str, **fields: object) -> str:
    store = Store.open(root / ".ctx", clock=engine_clock)
    try:
        result = engine.remember(store, Draft(text=text, **fields), OWNER)  # type: ignore[arg-type]
        return str(result.ids[0])
    finally:
        store.close()


def engine_clock():
    from ctx.hub import local_now

    return local_now()


def empty_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Returns a project with an empty store (hashing embedder), with no hub.

    With ``CTX_NO_HUB`` a prompt is recalled in full in the hook's process,
    vectors and floor included. The default floor is measured for MiniLM;
    the hashing embedder's cosines are lower for what is relevant and
    higher for what is not: the hooks' floor is 0.1.
    """
    monkeypatch.setenv("CTX_NO_HUB", "1")
    root = tmp_path / "app"
    root.mkdir()
    Store.init(root / ".ctx", clock=engine_clock).close()
    (root / ".ctx" / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n[hooks]\nfloor = 0.1\n'
    )
    return root


@pytest.fixture(name="project")
def bare_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """:func:`empty_project`; imported, it is the test module's ``project``."""
    return empty_project(tmp_path, monkeypatch)
