"""What a push, fetch, pull or clone loads beside the transfer (issue 34).

A process that moves a store through a path or ``git://`` loads no http
client: ``urllib3`` alone costs it about a tenth of a second. The import
sets are checked in a fresh interpreter (:mod:`test_startup`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from hostile_repos import GIT, GIT_ENV
from test_startup import _HEAVY, command_modules, imported


def test_a_transfer_through_a_path_loads_no_http_client(tmp_path: Path) -> None:
    store = tmp_path / "a" / ".ctx"
    remote = tmp_path / "remote.git"
    subprocess.run(
        [GIT, "init", "-q", "--bare", "-b", "main", str(remote)],
        check=True,
        env=GIT_ENV,
    )
    imported("--store", str(store), "init")
    imported("--store", str(store), "remember", "Deploys run on Fridays")
    imported("--store", str(store), "remote", "add", "origin", str(remote))
    for args in (
        ("--store", str(store), "push"),
        ("--store", str(store), "fetch"),
        ("--store", str(store), "pull"),
        ("clone", str(remote), str(tmp_path / "b")),
    ):
        modules = imported(*args)
        assert command_modules(modules) <= {"remotes", "merge", "store"}, args
        assert "ctx.engine.transfer" in modules, args  # it did transfer
        assert not {m.split(".")[0] for m in modules} & {"urllib3", *_HEAVY}, args
    assert (tmp_path / "b" / ".ctx" / "git").is_dir()
