"""Where ``prompt-submit``'s relevance floor goes: scores of relevant and idle prompts.

``ctx hook prompt-submit`` adds memories to a prompt only when they score at
least ``[hooks] floor``. This measures, on two realistic stores, the best
score a prompt gets when the store does hold its answer ("relevant") and
when it does not ("unrelated": chat, requests about other things), for two
scores: the fused score of recall (weighted reciprocal rank fusion, rank-based)
and the vector channel's cosine similarity (on a fixed scale).

Stores: ``docs`` (this repository's documentation primed section by section)
and ``notes`` (forty memories an agent would write while working on a web
service). Run::

    .venv/bin/python benchmarks/bench_hook_floor.py [--embedder minilm|hashing]

It prints a markdown report (``benchmarks/results/hook_floor.md`` holds one).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ctx import engine
from ctx.engine import Draft, Intent, Store
from ctx.hub import Workspace, local_now, recall

ROOT = Path(__file__).resolve().parent.parent
OWNER = Intent(agent="bench", intent="import")

NOTES = [
    ("decision", "The API is deployed to Kubernetes with Argo CD, blue-green."),
    ("decision", "The job queue is a Postgres table read with SELECT ... SKIP LOCKED."),
    ("decision", "We chose FastAPI over Flask for async request handling."),
    ("decision", "Sessions are JWTs signed with RS256; keys rotate every 30 days."),
    ("decision", "Images are stored in S3 behind CloudFront; uploads are presigned."),
    (
        "decision",
        "Feature flags live in LaunchDarkly; stale flags are removed monthly.",
    ),
    ("decision", "Database migrations use Alembic and run in a pre-deploy job."),
    ("decision", "Logs are shipped to Loki; metrics to Prometheus, 15 s scrape."),
    ("fact", "Staging runs on two t3.large nodes; production on six m6i.xlarge."),
    ("fact", "The payments webhook from Stripe retries for up to three days."),
    ("fact", "CI runs on GitHub Actions; the full suite takes about 11 minutes."),
    ("fact", "The mobile app pins API version v2 until the 4.0 release."),
    ("fact", "Redis holds rate-limit counters and the session cache, not jobs."),
    ("fact", "Search uses OpenSearch with an English analyzer and synonyms file."),
    ("fact", "Emails go through Postmark; templates live in templates/email/."),
    ("fact", "The nightly export to the data warehouse runs at 02:00 UTC."),
    ("pattern", "Every handler validates input with pydantic models in schemas/."),
    ("pattern", "Services log with structlog, one JSON object per line."),
    ("pattern", "Tests use factory_boy factories; no fixtures from JSON files."),
    ("pattern", "Background tasks must be idempotent: they may run twice."),
    ("pattern", "Money is stored as integer cents with an ISO currency code."),
    ("pattern", "Timestamps are stored in UTC and shown in the user's zone."),
    ("observation", "Staging ran out of memory twice last week during the export."),
    ("observation", "p99 latency of /search rose to 900 ms after the synonyms change."),
    ("observation", "Stripe webhooks arrived out of order during the outage."),
    ("observation", "The flaky test test_refund_partial fails about 1 run in 20."),
    ("observation", "Alembic autogenerate misses server defaults on enum columns."),
    ("observation", "CloudFront caches 404s for five minutes by default."),
    ("open-question", "Should the queue move from Postgres to SQS at 10k jobs/min?"),
    ("open-question", "Do we need per-tenant encryption keys for the EU customers?"),
    ("open-question", "Why does the nightly export sometimes take three hours?"),
    ("hypothesis", "The search latency comes from synonym expansion at query time."),
    ("hypothesis", "Out-of-memory on staging is the export loading all rows at once."),
    ("fact", "The admin dashboard is a separate React app under admin/."),
    ("fact", "Customer support uses Zendesk; tickets link to user ids."),
    ("decision", "Passwords are hashed with argon2id, memory cost 64 MiB."),
    ("decision", "Public API errors follow RFC 7807 problem+json."),
    ("fact", "The on-call rotation is weekly, handed over on Mondays at 10:00."),
    ("decision", "We pin Python to 3.12 across services; upgrades are planned."),
    ("fact", "Load tests use k6 scripts in loadtests/, run before each release."),
]

RELEVANT = {
    "docs": [
        "How does ctx find the store when I run a command?",
        "What happens when two processes write to the store at once?",
        "how are API keys stored for ctx serve?",
        "Explain temporal gravity in recall",
        "How do I merge a branch and what about conflicts?",
        "which embedder is the default and does it need a download?",
        "What does ctx undo do?",
        "how is a memory laid out on disk",
        "Can I search with typos in identifiers?",
        "What are the MCP tools and how do errors reach the model?",
    ],
    "notes": [
        "How do we deploy the API?",
        "the queue is slow, where do jobs live?",
        "Why is staging running out of memory?",
        "How should I store prices in the new invoices table?",
        "add a migration for the orders table",
        "search got slow, any idea why?",
        "which library do we use for input validation?",
        "the stripe webhook handler sees events out of order",
        "write a test for refunds",
        "How are passwords hashed?",
    ],
}
UNRELATED = [
    "What is the capital of Mongolia?",
    "write a haiku about autumn leaves",
    "thanks, that worked perfectly",
    "fix the typo in the second paragraph",
    "rename the variable x to count",
    "can you explain list comprehensions in python",
    "what's 17 times 23",
    "translate 'good morning' into French",
    "summarize this article for me",
    "tell me a joke about cats",
    "make the button blue",
    "why is the sky blue",
]


def build(root: Path, name: str, embedder: str) -> Workspace:
    """Makes the store ``name`` under ``root``; returns its workspace."""
    path = root / name / ".ctx"
    store = Store.init(path, clock=local_now)
    (path / "config.toml").write_text(f'[embedder]\nkind = "{embedder}"\n')
    if name == "docs":
        files = [
            ROOT / "README.md",
            ROOT / "VISION.md",
            *sorted((ROOT / "docs").glob("*.md")),
        ]
        for file in files:
            engine.prime(
                store, file.read_text(), file.stem.lower(), OWNER, file_name=file.name
            )
    else:
        drafts = [Draft(text=text, kind=kind) for kind, text in NOTES]
        engine.remember_many(store, drafts, OWNER)
    store.close()
    return Workspace(path)


def best(ws: Workspace, prompt: str) -> tuple[float, float]:
    """Returns the best fused score and the best vector cosine of a prompt."""
    result = recall(ws, prompt, budget=800, explain=True)
    fused, cosine = 0.0, -1.0
    for hit in result.hits:
        if hit.pinned:
            continue
        fused = max(fused, hit.score)
        for channel in hit.explain.channels if hit.explain else ():
            if channel.channel == "vector":
                cosine = max(cosine, channel.score)
    return fused, cosine


def main() -> None:
    """Prints the report."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args()
    rows: list[tuple[str, str, str, float, float]] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("docs", "notes"):
            ws = build(Path(tmp), name, args.embedder)
            best(ws, "warm up")
            for prompt in RELEVANT[name]:
                rows.append((name, "relevant", prompt, *best(ws, prompt)))
            for prompt in UNRELATED:
                rows.append((name, "unrelated", prompt, *best(ws, prompt)))
            ws.close()
    print(f"# prompt-submit's floor ({args.embedder} embedder)\n")
    print(f"{len(rows)} prompts, {time.perf_counter() - started:.0f} s.\n")
    print("| store | prompt | kind | best fused | best cosine |")
    print("| --- | --- | --- | ---: | ---: |")
    for name, kind, prompt, fused, cosine in rows:
        print(f"| {name} | {prompt} | {kind} | {fused:.3f} | {cosine:.3f} |")
    print()
    for name in ("docs", "notes"):
        for score, index in (("fused", 3), ("cosine", 4)):
            rel = [r[index] for r in rows if r[0] == name and r[1] == "relevant"]
            unr = [r[index] for r in rows if r[0] == name and r[1] == "unrelated"]
            print(
                f"- {name}, {score}: relevant min {min(rel):.3f} median "
                f"{statistics.median(rel):.3f}; unrelated median "
                f"{statistics.median(unr):.3f} max {max(unr):.3f}"
            )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
