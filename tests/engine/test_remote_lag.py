"""remote_lag: how far a store and a remote are apart, as last fetched."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from contextlib import closing
from datetime import datetime
from pathlib import Path

import pytest

from ctx.engine import (
    Draft,
    Intent,
    RemoteLag,
    RemoteNotFoundError,
    Store,
    add_remote,
    create_branch,
    differing_branches,
    fetch,
    push,
    remember,
    remote_lag,
)

ALICE = Intent(agent="alice", intent="observe")


def test_commits_each_side_lacks_and_the_branches_a_push_would_move(
    tmp_path: Path, clock: Callable[[], datetime]
):
    remote = tmp_path / "remote.git"
    subprocess.run(
        ["/usr/bin/git", "init", "-q", "--bare", "-b", "main", str(remote)],
        check=True,
    )
    with closing(Store.init(tmp_path / "a", clock=clock)) as a:
        add_remote(a, "origin", str(remote))
        assert remote_lag(a, "origin") == RemoteLag(
            remote="origin", unpushed=0, unmerged=0, differ=()
        )
        remember(a, Draft(text="The queue is Postgres"), ALICE)
        # main is not on the remote yet: compared only when named.
        assert remote_lag(a, "origin").unpushed == 0
        first = remote_lag(a, "origin", ["main"])
        assert first.differ == ("main",)
        assert first.unpushed >= 1
        push(a, "origin", ["main"])
        assert remote_lag(a, "origin", ["main"]).unpushed == 0

        remember(a, Draft(text="The API listens on 8080"), ALICE)
        create_branch(a, "scratch")
        lag = remote_lag(a, "origin", ["scratch"])
        assert (lag.unpushed, lag.unmerged, lag.differ) == (1, 0, ("main", "scratch"))
        assert differing_branches(a, "origin", ["scratch"]) == lag.differ
        assert differing_branches(a, "origin") == ("main",)

        with closing(Store.init(tmp_path / "b", clock=clock)) as b:
            add_remote(b, "origin", str(remote))
            fetch(b, "origin")
            lag = remote_lag(b, "origin")
            # Fetched, not merged: the remote's commits are no branch's here,
            # and this store's own first commit on main is not the remote's.
            assert (lag.unpushed, lag.unmerged) == (1, first.unpushed)
            assert lag.differ == ("main",)

        with pytest.raises(RemoteNotFoundError):
            remote_lag(a, "upstream")
        with pytest.raises(RemoteNotFoundError):
            differing_branches(a, "upstream")
