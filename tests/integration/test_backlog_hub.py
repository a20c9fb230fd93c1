"""Whole processes: a recall after a big import answers at once, a hub embeds."""

from __future__ import annotations

import json
from pathlib import Path

from integration_support import run_ctx, wait_for


def _import(store: Path, count: int) -> None:
    lines = store.parent / "many.jsonl"
    lines.write_text(
        "".join(
            json.dumps({"text": f"harbour crane number unit{i} was serviced"}) + "\n"
            for i in range(count)
        )
    )
    assert run_ctx(store, "import", str(lines)).returncode == 0


def _status(store: Path) -> dict:
    done = run_ctx(store, "index", "status", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_first_recall_answers_and_the_hub_it_starts_embeds_the_rest(
    hub_store: Path,
) -> None:
    _import(hub_store, 120)
    auto = {"CTX_HUB_AUTOSTART": "1"}
    first = run_ctx(hub_store, "recall", "crane unit7", "--json", env=auto)
    assert first.returncode == 0, first.stderr
    result = json.loads(first.stdout)
    assert result["unembedded"] == 122  # the import and the two memories before
    assert result["hits"][0]["body"] == "harbour crane number unit7 was serviced"
    wait_for(lambda: _status(hub_store)["unembedded"] == 0, seconds=60)
    status = _status(hub_store)
    assert status["documents"] == status["vectors"] == 122
    again = json.loads(run_ctx(hub_store, "recall", "crane", "--json").stdout)
    assert again["unembedded"] == 0
    assert run_ctx(hub_store, "hub", "stop").returncode == 0


def test_with_no_hub_allowed_the_recall_embeds_before_it_answers(
    hub_store: Path,
) -> None:
    _import(hub_store, 120)
    done = run_ctx(hub_store, "recall", "crane unit7", "--json")  # autostart off
    assert json.loads(done.stdout)["unembedded"] == 0
    status = _status(hub_store)
    assert status["documents"] == status["vectors"] == 122
