"""`remember` of a text already there, `--upsert`, and `import` (issue 16)."""


def test_remember_twice_returns_the_existing_id(ctx):
    first = ctx("remember", "Use UTC in every log line").stdout.strip()
    again = ctx("remember", "Use UTC  in every log line\n")
    assert again.stdout == f"{first}\n"
    assert again.stderr == (
        f"Notice: Already remembered as {first}: nothing written "
        "(--allow-duplicate writes it again).\n"
    )
    assert len(ctx.json("ls")) == 1
    shown = ctx.json("remember", "Use UTC in every log line")
    assert shown == {
        "store": str(ctx.root / ".ctx"),
        "id": first,
        "path": shown["path"],
        "commit": None,
        "existing": True,
        "updated": False,
        "tags_added": [],
        "pinned_now": False,
    }


def test_remember_again_with_new_tags_adds_them(ctx):
    first = ctx("remember", "Use UTC in every log line").stdout.strip()
    again = ctx("remember", "Use UTC in every log line", "--tag", "team:ops")
    assert again.stdout == f"{first}\n"
    assert again.stderr == (
        f"Notice: Already remembered as {first}: its tags now include team:ops "
        "(--allow-duplicate writes it again).\n"
    )
    assert ctx.json("show", first)["memory"]["tags"] == ["team:ops"]
    shown = ctx.json("remember", "Use UTC in every log line", "--tag", "team:ops")
    assert (shown["commit"], shown["tags_added"]) == (None, [])
    assert len(ctx.json("ls")) == 1


def test_remember_again_with_pin_pins_the_held_memory(ctx):
    first = ctx("remember", "Use UTC in every log line", "--tag", "team:ops")
    first_id = first.stdout.strip()
    other = ctx("remember", "Logs ship to Loki").stdout.strip()
    ctx("link", first_id, other, "--type", "RELATES_TO")
    again = ctx("remember", "Use UTC in every log line", "--pin", "--tag", "x:y")
    path = "pinned/general/use-utc-in-every-log-line.json"
    assert again.stdout == f"{first_id}\n"
    assert again.stderr == (
        f"Notice: Already remembered as {first_id}: it is now pinned ({path}); "
        "its tags now include x:y (--allow-duplicate writes it again).\n"
    )
    shown = ctx.json("show", first_id)
    assert (shown["path"], shown["memory"]["tags"]) == (path, ["team:ops", "x:y"])
    assert len(ctx.json("ls")) == 2
    assert len(ctx.json("related", first_id)) == 1  # its links kept
    recalled = ctx.json("recall", "Loki")
    assert [h["id"] for h in recalled["hits"] if h["pinned"]] == [first_id]
    assert [e["commit"]["summary"] for e in ctx.json("log", first_id)][:2] == [
        f"Tag {first_id} x:y",
        f"Pin {first_id}",
    ]
    # Pinned already: nothing more is written.
    shown = ctx.json("remember", "Use UTC in every log line", "--pin")
    assert (shown["commit"], shown["pinned_now"], shown["path"]) == (None, False, path)


def test_pin_after_an_upsert_and_not_for_a_session_summary(ctx, tmp_path):
    args = ["--kind", "decision", "--title", "Deploy day", "--upsert"]
    first = ctx.json("remember", *args, "Deploys go out Tuesday")
    updated = ctx("remember", *args, "--pin", "Deploys go out Wednesday")
    path = "pinned/general/deploy-day.json"
    assert updated.stderr == (
        f"Notice: Updated {first['id']} (--upsert); it is now pinned ({path}).\n"
    )
    assert ctx.json("show", first["id"])["path"] == path
    # A session's summary and a primed section keep the place their
    # commands find them at: refused, nothing written.
    ctx("session", "end", "s1", "--summary", "Moved the queue to Postgres")
    guide = tmp_path / "guide.md"
    guide.write_text("# Setup\n\nRun make setup first.\n")
    ctx("prime", str(guide))
    before = ctx.files()
    refused = ctx("remember", "--pin", "Moved the queue to Postgres", code=4)
    assert refused.stderr.startswith("Error: Memory ")
    assert "lies in sessions/" in refused.stderr
    primed = ctx("remember", "--pin", "Run make setup first.", code=4)
    assert "`ctx prime FILE --pin` pins a document's sections." in primed.stderr
    assert ctx.files() == before


def test_allow_duplicate_writes_it_again(ctx):
    first = ctx("remember", "twice").stdout.strip()
    second = ctx("remember", "twice", "--allow-duplicate").stdout.strip()
    assert second != first
    assert len(ctx.json("ls")) == 2


def test_upsert_updates_the_memory_of_that_kind_and_title(ctx):
    args = ["--kind", "decision", "--title", "Queue backend", "--upsert"]
    first = ctx.json("remember", *args, "Redis")
    assert (first["existing"], first["updated"]) == (False, False)
    second = ctx("remember", *args, "Postgres")
    assert second.stdout == f"{first['id']}\n"
    assert second.stderr == f"Notice: Updated {first['id']} (--upsert).\n"
    assert ctx.json("show", first["id"])["memory"]["body"] == "Postgres"
    assert len(ctx.json("ls")) == 1


def test_upsert_refuses_an_ambiguous_title(ctx):
    args = ["--kind", "decision", "--title", "Queue backend"]
    ctx("remember", *args, "one")
    ctx("remember", *args, "two")
    before = ctx.files()
    result = ctx("remember", *args, "--upsert", "three", code=4)
    assert result.stderr.startswith(
        "Error: 2 memories of kind decision are titled 'Queue backend'.\n"
    )
    assert ctx.files() == before


def test_import_says_how_many_lines_were_already_there(ctx, tmp_path):
    ctx("remember", "old news")
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"text": "old news"}\n{"text": "fresh"}\n')
    out = ctx("import", str(notes)).stdout
    assert out.startswith("Imported 1 memory in ")
    assert out.endswith("; 1 line was already there.\n")
    assert ctx("import", str(notes)).stdout == (
        "Everything in the file is already there: nothing to commit.\n"
    )


def test_remember_again_with_another_tier_moves_the_memory_to_it(ctx):
    # As `ctx tag` does: a memory is in one tier at a time (two tier tags
    # made it archived and of reference at once, and recall dropped it).
    first = ctx("remember", "The queue is Postgres", "--tag", "tier:reference")
    memory_id = first.stdout.strip()
    ctx("remember", "The queue is Postgres", "--tag", "tier:off-context")
    tags = ctx.json("show", memory_id)["memory"]["tags"]
    assert tags == ["tier:off-context"]
