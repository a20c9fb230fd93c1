"""`ctx remember` and `ctx import` on a full disk: one error, no lock left (#28)."""

from __future__ import annotations

import gc
import json
from datetime import UTC, datetime

import pytest
from full_disk import FullDisk, leftovers

from ctx.engine import Store, list_memories


def bodies(ctx) -> list[str]:
    store = Store.open(
        ctx.root / ".ctx", clock=lambda: datetime(2026, 1, 5, tzinfo=UTC)
    )
    try:
        return sorted(r.memory.body for r in list_memories(store, None, ""))
    finally:
        store.close()


@pytest.mark.parametrize("command", ["remember", "import"])
def test_a_full_disk_is_one_error(ctx, tmp_path, command):
    ctx("remember", "Acknowledged before the disk filled.")
    before = bodies(ctx)
    notes = tmp_path / "notes.jsonl"
    notes.write_text(
        "".join(
            json.dumps({"text": f"Note {n} about the build."}) + "\n" for n in range(80)
        )
    )
    args = (
        ["remember", "The queue lives in Postgres."]
        if command == "remember"
        else ["import", str(notes)]
    )
    with pytest.MonkeyPatch.context() as patch:
        FullDisk(100).install(patch)
        result = ctx(*args, code=6)
    gc.collect()
    assert result.stdout == ""
    assert result.stderr == (
        f"Error: No space left on the disk of the store at {ctx.root / '.ctx'}; "
        "the write was not made.\n"
        "Hint: Free some space on that disk, then run the command again.\n"
    )
    assert leftovers(ctx.root / ".ctx") == []
    assert bodies(ctx) == before
    ctx(*args)  # room again
    assert len(bodies(ctx)) > len(before)
