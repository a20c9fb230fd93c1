"""Builds Dream's labelled set of realistic agent memory (issue 31).

Usage::

    .venv/bin/python benchmarks/dream_agent_set.py   # writes labels/dream_agent.json

The set is what an agent working on this project would have recorded, with
a label for every pair that is something, by construction, from a fixed
seed and a fixed commit of this repository (:data:`SOURCE_COMMIT`), so it is
the same on every run:

- **facts from the docs**: the first sentence of paragraphs of ``docs/*.md``
  (distinct facts; two of one page may well be related, so a link between
  them is counted apart, neither right nor wrong);
- **history**: the summaries of the project's commits, as notes of what
  changed ("Changed: ...": separate events);
- **routine event notes** from templates (pull requests reviewed, CI runs,
  deploys, standups, backups, flaky tests fixed, pairing): each a separate,
  true event; none supersedes another, none is related to another;
- **changed decisions** (``update``): the same subject with one value
  replaced, under the same title or untitled, written 10-60 days later;
- **restated facts** (``duplicate``): a fact typed again (case, spacing,
  punctuation, a filler word, a copy without its title), 0-3 days later;
- **contradictions**: a status and its negation written the same day;
- **related subjects** (``link``): two notes about one rare component
  (one uses it, the other says something about it), days apart.

``must_stay`` lists every memory an accept-all merge may not hide: all but
the older side of each update and one side of each duplicate.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).parent / "labels" / "dream_agent.json"
SOURCE_COMMIT = "c35d1b4"
SEED = 31
NOW = "2026-03-20T12:00:00+00:00"

TOPICS = ("ci", "docs", "billing", "search", "auth", "the lens", "remotes", "hooks")
PEOPLE = ("Priya", "Marco", "Lena", "Tomás", "Aiko", "Sam", "Noor", "Jonas")

UPDATES = [
    ("API port", "The API listens on port 8080", "The API listens on port 9090"),
    (
        "Default recall budget",
        "Recall packs 800 tokens by default",
        "Recall packs 1,200 tokens by default",
    ),
    (
        "Default embedder",
        "The default embedder is MiniLM int8 on onnxruntime",
        "The default embedder is e5-small on onnxruntime",
    ),
    (
        "Release branch",
        "Releases are cut from the release branch",
        "Releases are cut from main",
    ),
    ("CI provider", "CI runs on GitHub Actions", "CI runs on Buildkite"),
    (
        "Secrets mode",
        "The secrets scan mode defaults to warn",
        "The secrets scan mode defaults to block",
    ),
    (
        "Planning day",
        "The team plans the sprint on Tuesdays",
        "The team plans the sprint on Thursdays",
    ),
    (
        None,
        "The staging database is Postgres 15",
        "The staging database is Postgres 16",
    ),
    (
        None,
        "The on-call rotation is owned by Priya",
        "The on-call rotation is owned by Marco",
    ),
    (
        None,
        "Dream's budget is 200 memories a cycle",
        "Dream's budget is 500 memories a cycle",
    ),
    (
        None,
        "The SessionEnd hook timeout is 1.5 s",
        "The SessionEnd hook timeout is 3 s",
    ),
    (None, "The project requires Python 3.11", "The project requires Python 3.12"),
    (
        None,
        "The nightly export runs at 02:00 UTC",
        "The nightly export runs at 03:30 UTC",
    ),
    (None, "The docs site is built with MkDocs", "The docs site is built with Sphinx"),
    (
        None,
        "Log retention on the hub is set to 14 days",
        "Log retention on the hub is set to 30 days",
    ),
    (None, "The session cache lives in Redis", "The session cache lives in Memcached"),
    (
        None,
        "The largest import file accepted is 25 MB",
        "The largest import file accepted is 50 MB",
    ),
    (
        None,
        "The store's write lock times out after 10 seconds",
        "The store's write lock times out after 30 seconds",
    ),
    (
        None,
        "The MCP SDK we build on is version 2.2",
        "The MCP SDK we build on is version 2.3",
    ),
    (
        None,
        "Staging runs in the region eu-west-1",
        "Staging runs in the region eu-central-1",
    ),
    (
        None,
        "The HTTP API allows 100 requests per minute per key",
        "The HTTP API allows 300 requests per minute per key",
    ),
    (
        None,
        "The legacy JSONL importer is supported",
        "The legacy JSONL importer is no longer supported",
    ),
    (
        None,
        "Brute-force vector search is used up to 100k memories",
        "Brute-force vector search is used up to 200k memories",
    ),
    (None, "Code review needs one approval", "Code review needs two approvals"),
    (
        None,
        "The lens refreshes the log every 5 seconds",
        "The lens refreshes the log every 2 seconds",
    ),
]

RESTATED = [
    ("SSO", "SSO uses OIDC with Okta"),
    (None, "The build cache lives in S3"),
    (None, "Commits carry the intent as git trailers"),
    (None, "Branch names under dream/ belong to Dream"),
    ("Link files", "Each link is one small file under links/"),
    (None, "Recall hides superseded memories unless asked with --all"),
    (None, "The hub's indexes can always be rebuilt from the commits"),
    (None, "Tantivy allows one writer per index at a time"),
    (None, "Memory ids are ULIDs, sortable and readable"),
    (None, "Pinned memories take at most half the budget"),
    (
        "Merge conflicts",
        "A clash of one memory's body is stored as a conflict, never lost",
    ),
    (None, "The private state is never committed to git"),
    (None, "Hooks always exit 0 so they never block the prompt"),
    (None, "The lexical channel weighs function words a quarter"),
    (None, "Remotes are ordinary git remotes"),
    (None, "The installer writes a marketplace entry for Claude Code"),
    (None, "ctx gc packs loose objects in the background"),
    (None, "Feedback on a recall is taken for a week"),
    (None, "The embedder cache is keyed by the blake3 hash of the text"),
    (None, "Undo steps a branch back by one operation"),
]

STATUSES = [
    "The deploy job is green on main",
    "The nightly export finished on time",
    "The search index is caught up with main",
    "The staging certificate is valid",
    "The flaky lens snapshot test passes",
    "The remote mirror is in sync",
    "The backup of the hub store is complete",
    "The release notes are approved",
    "Dream's background thread is running",
    "The MCP server answers on stdio",
    "The disk of the build machine has room",
    "The secrets scan is clean on main",
]

RELATED = [
    (
        "The billing service uses Kafka for invoices",
        "Kafka retention is set to seven days",
    ),
    (
        "The checkout service uses Stripe for payments",
        "Stripe webhooks retry for three days",
    ),
    ("Single sign-on relies on Okta", "Okta pushes group changes every hour"),
    ("Error reports go to Sentry", "Sentry drops events above 200 a minute"),
    ("The dashboards are built in Grafana", "Grafana reads the hub metrics every 30 s"),
    (
        "Infrastructure is described in Terraform",
        "Terraform state is locked in a DynamoDB table",
    ),
    (
        "The queue workers depend on RabbitMQ",
        "RabbitMQ needs 2 GB of memory on staging",
    ),
    (
        "Search for the docs site uses Meilisearch",
        "Meilisearch rebuilds its index on each deploy",
    ),
    ("Feature flags come from Unleash", "Unleash caches flags for 15 seconds"),
    ("The mobile app talks to Firebase", "Firebase keys rotate every quarter"),
    ("Uploads are scanned by ClamAV", "ClamAV signatures update twice a day"),
    (
        "The status page is hosted on Statuspage",
        "Statuspage posts incidents to the #ops channel",
    ),
    ("Emails are sent through Postmark", "Postmark bounces go to the support inbox"),
    (
        "The embedder runs on onnxruntime",
        "onnxruntime threads fight BLAS threads on 2 cores",
    ),
    ("Tracing uses OpenTelemetry", "OpenTelemetry spans are sampled at 10%"),
    ("Secrets are kept in Vault", "Vault tokens expire after 24 hours"),
    ("The CLI is built on click", "click 8.2 keeps stdout and stderr apart in tests"),
    (
        "The TUI is written with Textual",
        "Textual snapshots are updated only after review",
    ),
    (
        "Git objects are written through dulwich",
        "dulwich needs merge3 for content merges",
    ),
    ("The vector index uses hnswlib", "hnswlib builds 100k vectors in 37 s here"),
]


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def _doc_facts(rng: random.Random) -> list[tuple[str, str]]:
    """Returns (page, first sentence) of paragraphs of the docs."""
    pages = [
        p
        for p in _git("ls-tree", "--name-only", SOURCE_COMMIT, "docs/").split()
        if p.endswith(".md")
    ]
    out = []
    for page in pages:
        text = _git("show", f"{SOURCE_COMMIT}:{page}")
        for para in re.split(r"\n\s*\n", text):
            para = " ".join(para.split())
            if not para[:1].isalpha() or "|" in para or len(para) < 80:
                continue
            sentence = re.split(r"(?<=[.!?])\s+", para)[0]
            if 40 <= len(sentence) <= 220:
                out.append((Path(page).stem, sentence))
    rng.shuffle(out)
    return out[:110]


def _history() -> list[str]:
    summaries = _git("log", "--format=%s", "-n", "110", SOURCE_COMMIT).splitlines()
    return [f"Changed: {s[:200]}" for s in summaries]


def _routine(rng: random.Random) -> list[str]:
    out = []
    for n in range(20):
        topic = TOPICS[n % len(TOPICS)]
        out.append(f"Routine note {n}: reviewed pull request {100 + n} about {topic}.")
    for n in range(15):
        out.append(f"CI run {4500 + n} on main passed in {rng.randint(6, 19)} min")
    for n in range(10):
        out.append(f"Deployed build {2300 + 7 * n} to staging")
    for n in range(15):
        topic = TOPICS[(n * 3) % len(TOPICS)]
        out.append(f"Standup 2026-02-{n + 2:02d}: discussed {topic} and the backlog")
    for n in range(10):
        files, gb = rng.randint(900, 1400), rng.randint(20, 60) / 10
        out.append(
            f"Ran the nightly backup on 2026-02-{n + 10:02d}: {files} files, {gb} GB"
        )
    areas = ("hub", "engine", "porcelain", "lens")
    for n in range(10):
        out.append(f"Fixed flaky test test_case_{n:02d} in tests/{areas[n % 4]}")
    for n in range(8):
        out.append(f"Paired with {PEOPLE[n]} on {TOPICS[(n * 5) % len(TOPICS)]}")
    return out


def _retyped(text: str, rng: random.Random, n: int) -> str:
    choice = n % 4
    if choice == 0:
        return text.lower()
    if choice == 1:
        return text.replace(" ", "  ", 2) + "."
    if choice == 2:
        return text.upper()[:1] + text[1:] + "!"
    words = text.split()
    words.insert(min(2, len(words)), "really")
    return " ".join(words)


def build() -> dict[str, object]:
    """Returns the set: memories, labelled pairs and what must stay."""
    rng = random.Random(SEED)
    memories: list[dict[str, object]] = []
    pairs: list[dict[str, str]] = []

    def add(body: str, days: float, group: str, **extra: object) -> str:
        key = f"m{len(memories):04d}"
        memories.append(
            {
                "key": key,
                "body": body,
                "days_ago": round(days, 2),
                "group": group,
                "kind": extra.get("kind", "fact"),
                "title": extra.get("title"),
                "tags": extra.get("tags", []),
            }
        )
        return key

    for page, sentence in _doc_facts(rng):
        add(sentence, rng.uniform(5, 170), f"doc:{page}", tags=[f"area:{page}"])
    for summary in _history():
        add(summary, rng.uniform(1, 120), "history", kind="observation")
    for text in _routine(rng):
        add(text, rng.uniform(1, 60), "routine", kind="observation")
    may_go: set[str] = set()
    for title, old, new in UPDATES:
        days = rng.uniform(60, 150)
        kind = "decision" if title else "fact"
        a = add(old, days, "update", kind=kind, title=title)
        b = add(new, days - rng.uniform(10, 60), "update", kind=kind, title=title)
        pairs.append({"a": a, "b": b, "label": "update"})
        may_go.add(a)
    for n, (title, text) in enumerate(RESTATED):
        days = rng.uniform(10, 150)
        a = add(text, days, "duplicate", title=title)
        if title and n % 2 == 0:
            b = add(text.lower(), days - rng.uniform(0, 3), "duplicate")
        else:
            b = add(
                _retyped(text, rng, n),
                days - rng.uniform(0, 3),
                "duplicate",
                title=title,
            )
        pairs.append({"a": a, "b": b, "label": "duplicate"})
    for text in STATUSES:
        days = rng.uniform(1, 100)
        a = add(text, days, "contradiction", kind="observation")
        negated = re.sub(
            r"\b(is|are|passes|answers|has|finished)\b",
            lambda m: {
                "is": "is not",
                "are": "are not",
                "passes": "does not pass",
                "answers": "does not answer",
                "has": "has no",
                "finished": "did not finish",
            }[m.group()],
            text,
            count=1,
        )
        b = add(
            negated, days - rng.uniform(0, 0.3), "contradiction", kind="observation"
        )
        pairs.append({"a": a, "b": b, "label": "contradiction"})
    for first, second in RELATED:
        days = rng.uniform(20, 150)
        a = add(first, days, "related")
        b = add(second, days - rng.uniform(2, 20), "related")
        pairs.append({"a": a, "b": b, "label": "link"})
    must_stay = [
        m["key"]
        for m in memories
        if m["key"] not in may_go and m["group"] != "duplicate"
    ]
    duplicates = [[p["a"], p["b"]] for p in pairs if p["label"] == "duplicate"]
    return {
        "source_commit": SOURCE_COMMIT,
        "now": NOW,
        "memories": memories,
        "pairs": pairs,
        "must_stay": must_stay,
        "duplicate_pairs": duplicates,
    }


def main() -> None:
    data = build()
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    groups: dict[str, int] = {}
    for m in data["memories"]:  # type: ignore[attr-defined]
        g = str(m["group"]).split(":")[0]
        groups[g] = groups.get(g, 0) + 1
    print(OUT, len(data["memories"]), groups)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
