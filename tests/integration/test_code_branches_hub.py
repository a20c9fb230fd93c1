"""A hub started in one work tree answers a caller in another for its code branch."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from code_repos import code_repo, git
from integration_support import CTX, start_hub_process, wall_clock

from ctx.engine import Store


def ctx(cwd: Path, store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CTX), "--store", str(store), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_hub_answers_the_callers_code_branch_not_its_own(tmp_path: Path) -> None:
    code = code_repo(tmp_path / "code")
    git(code, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "feature"))
    feature = tmp_path / "feature"
    store = tmp_path / ".ctx"
    Store.init(store, clock=wall_clock).close()
    (store / "config.toml").write_text(
        '[embedder]\nkind = "hashing"\n\n[branches]\nfollow_code = true\n'
    )
    assert ctx(code, store, "remember", "The queue is Postgres").returncode == 0
    wrote = ctx(feature, store, "remember", "The queue moves to Kafka")
    assert wrote.returncode == 0, wrote.stderr

    hub = start_hub_process(store, cwd=code)  # the hub's own folder is on main
    try:
        asked = {
            folder: ctx(folder, store, "recall", "queue Kafka", "--json")
            for folder in (code, feature)
        }
        # A hook's recall, asked of the hub too, reads the caller's branch.
        prompted = {
            folder: subprocess.run(
                [str(CTX), "--store", str(store), "hook", "prompt-submit"],
                cwd=folder,
                input=json.dumps(
                    {
                        "session_id": f"s-{folder.name}",
                        "cwd": str(folder),
                        "hook_event_name": "UserPromptSubmit",
                        "prompt": "does the queue move to Kafka?",
                    }
                ),
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            ).stdout
            for folder in (code, feature)
        }
        assert hub.poll() is None  # it answered them all
    finally:
        hub.kill()
        hub.communicate(timeout=30)
    answers = {folder: json.loads(done.stdout) for folder, done in asked.items()}
    assert answers[feature]["branch"] == "feature"
    assert "The queue moves to Kafka" in [h["body"] for h in answers[feature]["hits"]]
    assert answers[code]["branch"] == "main"
    assert "The queue moves to Kafka" not in [h["body"] for h in answers[code]["hits"]]
    assert "The queue moves to Kafka" in prompted[feature]
    assert "The queue moves to Kafka" not in prompted[code]
