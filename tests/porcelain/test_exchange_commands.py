import json

from click.testing import CliRunner

from ctx.porcelain.main import cli


def test_export_import_round_trip_through_the_cli(ctx, tmp_path):
    a = ctx("remember", "first", "--kind", "decision", "--tag", "p:x").stdout.strip()
    b = ctx("remember", "second\nwith two lines", "--title", "Second").stdout.strip()
    ctx("link", a, b, "--type", "DEPENDS_ON", "--reason", "because")
    exported = ctx("export").stdout
    assert exported.splitlines()[0].startswith('{"format":"ctx-export","version":1')
    dump = tmp_path / "dump.jsonl"
    dump.write_text(exported)
    other = tmp_path / "other"
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(other)]).exit_code == 0
    store = ["--store", str(other / ".ctx")]
    result = runner.invoke(cli, [*store, "import", str(dump)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("Imported 2 memories in ")
    again = runner.invoke(cli, [*store, "export"]).stdout
    assert again == exported
    assert runner.invoke(cli, [*store, "import", str(dump)]).stdout == (
        "Everything in the file is already there: nothing to commit.\n"
    )
    subset = ctx("export", "--where", "kind:decision").stdout.splitlines()
    assert len(subset) == 2
    assert json.loads(subset[1])["memory"]["id"] == a


def test_import_refuses_a_bad_graph_line(ctx, tmp_path):
    a = ctx("remember", "first").stdout.strip()
    lines = ctx("export").stdout.splitlines()
    lines.append(
        f'{{"type": "link", "source": "{a}", "link_type": "LIKES", "target": "{a}"}}'
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    before = ctx.files()
    result = ctx("import", str(bad), code=4)
    assert result.stderr.startswith("Error: Line 3: ")
    assert ctx.files() == before


def test_ingest(ctx, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text(
        "\n\n".join(f"Paragraph {i}. " + "words " * 400 for i in range(20))
    )
    binary = tmp_path / "image.bin"
    binary.write_bytes(b"\x89PNG\x00\x00\x01")
    before = ctx.files()
    err = ctx("ingest", str(notes), str(binary), code=4).stderr
    assert err.startswith("Error: image.bin")
    assert ctx.files() == before
    out = ctx("ingest", str(notes), "--tag", "project:docs").stdout
    assert out.startswith("Ingested 1 file as ")
    listed = json.loads(ctx("ls", "--json").stdout)
    assert len(listed) > 1
    assert all(m["kind"] == "source" for m in listed)
    # Ingested again, every piece is there: nothing written.
    before = ctx.files()
    again = ctx("ingest", str(notes), "--tag", "project:docs").stdout
    assert again == "Every piece of the files is already there: nothing to commit.\n"
    assert ctx.files() == before
    # One paragraph changed: that piece alone is written.
    notes.write_text(notes.read_text().replace("Paragraph 7.", "Paragraph seven."))
    changed = ctx.json("ingest", str(notes))
    assert (len(changed["ids"]), changed["existing"]) == (1, len(listed) - 1)
    assert len(ctx.json("ls")) == len(listed) + 1


def test_import_and_ingest_json(ctx, tmp_path):
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"text": "a"}\n{"text": "b"}\n')
    imported = ctx.json("import", str(notes))
    assert list(imported) == ["store", "commit", "ids", "existing"]
    assert len(imported["ids"]) == 2
    dump = tmp_path / "dump.jsonl"
    dump.write_text(ctx("export").stdout)
    store = str(tmp_path / ".ctx")
    again = ctx.json("import", str(dump))
    assert again == {"store": store, "commit": None, "ids": [], "existing": 0}
    text = tmp_path / "a.md"
    text.write_text("hello\n")
    ingested = ctx.json("ingest", str(text))
    assert list(ingested) == ["store", "commit", "ids", "existing"]
    assert len(ingested["ids"]) == 1
    assert ingested["commit"] == ctx.json("log")[0]["commit"]["id"]
