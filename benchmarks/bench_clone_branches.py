"""Speed of cloning and fetching a remote with many branches (issue #28).

Usage::

    .venv/bin/python benchmarks/bench_clone_branches.py            # 2,000 branches
    .venv/bin/python benchmarks/bench_clone_branches.py --branches 20000

A ctx store with one memory is pushed to a bare repository; stock git's
``fast-import`` then adds N branches there, each one commit of its own on top
of ``main`` (as agent branches are). Timed, in this process: ``clone`` of that
remote through its path, and through an ssh address served by a stand-in
``ssh`` that runs ``git-upload-pack`` here (git's own server, as over the
network); then a ``fetch`` that brings nothing new. ``git clone --bare`` of
the same remote is the yardstick. Prints one line per measurement; writes no
result file.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from _bench_common import DATA, GIT, GIT_ENV, OBSERVE, clock

from ctx.engine import Access, Draft, Store, add_remote, clone, fetch, push, remember

FAKE_SSH = """#!/bin/sh
# Stands in for ssh: runs the remote command (the last argument) here.
for last; do :; done
exec sh -c "$last"
"""


def _remote(root: Path, branches: int) -> Path:
    seed = Store.init(root / "seed", clock=clock)
    remember(seed, Draft(text="The queue is Postgres"), OBSERVE)
    remote = root / "remote.git"
    subprocess.run([GIT, "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    add_remote(seed, "origin", str(remote))
    push(seed)
    tip = seed.branch_tip("main")
    seed.close()
    stream = []
    for n in range(branches):
        message = f"branch {n}\n".encode()
        stream.append(
            b"commit refs/heads/agent/b%05d\n" % n
            + b"committer bench <bench@ctx> 1767605400 +0000\n"
            + b"data %d\n%s\nfrom %s\n\n" % (len(message), message, tip.encode())
        )
    subprocess.run(
        [GIT, "--git-dir", str(remote), "fast-import", "--quiet"],
        input=b"".join(stream),
        check=True,
        env=GIT_ENV,
    )
    subprocess.run(
        [GIT, "--git-dir", str(remote), "pack-refs", "--all"], check=True, env=GIT_ENV
    )
    return remote


def _timed(label: str, fn: Callable[[], object]) -> None:
    start = time.perf_counter()
    fn()
    print(f"{label:44} {time.perf_counter() - start:8.2f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--branches", type=int, default=2000)
    args = parser.parse_args()
    root = DATA / "clone_branches"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    remote = _remote(root, args.branches)
    ssh = root / "fake-ssh"
    ssh.write_text(FAKE_SSH)
    ssh.chmod(0o755)
    access = Access(ssh_command=str(ssh))
    print(f"{args.branches + 1} branches")
    _timed(
        "git clone --bare (path)",
        lambda: subprocess.run(
            [GIT, "clone", "-q", "--bare", str(remote), str(root / "git-clone")],
            check=True,
            env=GIT_ENV,
        ),
    )
    _timed("clone (path)", lambda: clone(root / "local", str(remote), clock=clock))
    _timed(
        "clone (ssh: git-upload-pack)",
        lambda: clone(
            root / "ssh", f"ssh://localhost{remote}", clock=clock, access=access
        ),
    )
    store = Store.open(root / "local", clock=clock)
    _timed("fetch, nothing new (path)", lambda: fetch(store))
    store.close()
    store = Store.open(root / "ssh", clock=clock)
    _timed("fetch, nothing new (ssh)", lambda: fetch(store, access=access))
    store.close()
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
