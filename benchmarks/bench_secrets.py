"""How well ctx keeps secrets out: detection rate, false alarms, speed.

Three measurements of :func:`ctx.hub.secrets.find_secrets`, the scan every
write runs (issue 33):

- Detection: a corpus of secrets in each provider's documented format, with
  random characters (never real ones), each set in prose or in a config or
  code line as people paste them. The corpus is generated from a fixed seed
  by :func:`corpus` below rather than committed as a file: a file of
  provider-format tokens would trip the push protection of forges and every
  secret scanner run over this repository. The rate per kind counts a
  sample found when redacting what the scan reports leaves nothing of the
  secret; "named" counts those reported under the expected kind.
- False alarms: every turn of LoCoMo (``/work/shared/eval/locomo``; also
  ``CTX_LOCOMO``), and every line of this project's ``docs/`` and ``*.py``
  files (the scan's own source aside: it spells the formats it detects).
  Goal: none.
- Speed: one scan of a 256 KB memory (LoCoMo turns) and of a short one, on
  a warm process; and the first scan in a fresh process (loading the
  library).

Run: ``.venv/bin/python benchmarks/bench_secrets.py`` (about a minute);
writes ``benchmarks/results/secrets.md``.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import string
import subprocess
import sys
import time
from base64 import b64encode, urlsafe_b64encode
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from ctx.hub.secrets import could_hold_secret, find_secrets, redact_secrets

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "secrets.md"
LOCOMO = Path(os.environ.get("CTX_LOCOMO", "/work/shared/eval/locomo/locomo10.json"))
PER_KIND = 50
SEED = 33

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _jwt(rng: random.Random) -> str:
    def part(data: dict[str, object]) -> str:
        raw = json.dumps(data, separators=(",", ":")).encode()
        return urlsafe_b64encode(raw).decode().rstrip("=")

    head = part({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"})
    body = part({"sub": _pick(rng, LOWER_DIGITS, 10), "iat": rng.randrange(10**9)})
    return f"{head}.{body}.{_pick(rng, ALNUM + '-_', 43)}"


def _pem(rng: random.Random) -> str:
    label = rng.choice(
        ["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"]
    )
    body = b64encode(rng.randbytes(rng.choice([96, 192, 384]))).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])


def _password(rng: random.Random) -> str:
    return (
        _pick(rng, ALNUM, rng.randrange(8, 13))
        + rng.choice("!#%*-_")
        + _pick(rng, string.digits, 2)
    )


def _url_password(rng: random.Random) -> str:
    # What a URL's userinfo may hold unescaped (RFC 3986): letters, digits,
    # "-._~" and the sub-delimiters "!$&'()*+,;=".
    tail = rng.choice("-._~!$*+,;=")
    return _pick(rng, ALNUM, rng.randrange(8, 13)) + tail + _pick(rng, string.digits, 2)


def _host(rng: random.Random) -> str:
    return rng.choice(
        ["db.internal", "10.0.3.7", "pg-prod.corp.lan", "cluster0.a1b2c.mongodb.net"]
    )


class _Core(str):
    """A secret inside its context (a URL, a connection string): the text
    is the context with the secret in it; ``core`` is the secret alone."""

    core: str

    def __new__(cls, context: str, core: str) -> _Core:
        made = super().__new__(cls, context.format(core))
        made.core = core
        return made


# Each kind: the secret's generator, the kind ctx should name, and the lines
# it is pasted in ({s} is the secret; {pw} and {host} a password and a host
# of a URL that is the secret's context).
KINDS: dict[str, tuple[Callable[[random.Random], str], str, tuple[str, ...]]] = {
    "aws-access-key": (
        lambda r: rng_prefix(r, ["AKIA", "ASIA"]) + _pick(r, UPPER_DIGITS, 16),
        "aws-access-key",
        (
            "The deploy user's access key id is {s}.",
            "AWS_ACCESS_KEY_ID={s}",
            'aws_access_key_id = "{s}"',
        ),
    ),
    "aws-secret-key": (
        lambda r: _pick(r, ALNUM + "/+", 40),
        "aws-secret-key",
        (
            "aws_secret_access_key = {s}",
            "AWS_SECRET_ACCESS_KEY={s}",
            "The AWS secret key is {s}",
        ),
    ),
    "github-classic": (
        lambda r: rng_prefix(r, ["ghp_", "gho_", "ghs_"]) + _pick(r, ALNUM, 36),
        "github-token",
        (
            "Use the token {s} for the release job.",
            "GITHUB_TOKEN={s}",
            "git clone https://{s}@github.com/acme/api",
        ),
    ),
    "github-fine-grained": (
        lambda r: f"github_pat_{_pick(r, ALNUM, 22)}_{_pick(r, ALNUM, 59)}",
        "github-token",
        ("New fine-grained PAT: {s}", "export GH_TOKEN={s}"),
    ),
    "gitlab": (
        lambda r: "glpat-" + _pick(r, ALNUM + "-_", 20),
        "gitlab-token",
        ("GitLab token for CI is {s}", "CI_JOB_TOKEN: {s}"),
    ),
    "slack-bot": (
        lambda r: (
            f"xoxb-{_pick(r, string.digits, 12)}-{_pick(r, string.digits, 13)}-{_pick(r, ALNUM, 24)}"
        ),
        "slack-token",
        ("The Slack bot posts with {s}", "SLACK_BOT_TOKEN={s}"),
    ),
    "slack-user": (
        lambda r: (
            f"xoxp-{_pick(r, string.digits, 12)}-{_pick(r, string.digits, 12)}-{_pick(r, string.digits, 13)}-{_pick(r, HEX, 32)}"
        ),
        "slack-token",
        ("my user token {s} (do not share)", "slack_user_token: {s}"),
    ),
    "slack-webhook": (
        lambda r: (
            f"https://hooks.slack.com/services/T{_pick(r, UPPER_DIGITS, 8)}/B{_pick(r, UPPER_DIGITS, 10)}/{_pick(r, ALNUM, 24)}"
        ),
        "slack-webhook",
        ("Alerts go to {s}", 'webhook_url = "{s}"'),
    ),
    "stripe": (
        lambda r: rng_prefix(r, ["sk_live_", "rk_live_"]) + _pick(r, ALNUM, 24),
        "stripe-key",
        ("Stripe live key: {s}", "STRIPE_SECRET_KEY={s}"),
    ),
    "google-api-key": (
        lambda r: "AIza" + _pick(r, ALNUM + "-_", 35),
        "google-api-key",
        (
            "The Maps key is {s}",
            "GOOGLE_API_KEY={s}",
            "https://maps.googleapis.com/maps/api/js?key={s}",
        ),
    ),
    "openai-sk": (
        lambda r: rng_choice_openai(r),
        "openai-key",
        (
            "OPENAI_API_KEY={s}",
            "Use {s} for the eval runs.",
            'client = OpenAI(api_key="{s}")',
        ),
    ),
    "private-key-pem": (
        _pem,
        "private-key",
        ("The deploy key:\n{s}\nKeep it safe.", "{s}"),
    ),
    "password-in-url": (
        lambda r: _Core(f"postgres://app:{{}}@{_host(r)}:5432/app", _url_password(r)),
        "password-in-url",
        (
            "DATABASE_URL={s}",
            "Connect with {s}",
            "mongodb+srv://admin:{pw}@{host}/prod",
        ),
    ),
    "connection-string": (
        lambda r: (
            f"Server=tcp:{_host(r)},1433;Database=app;User ID=sa;Password={_password(r)};"
        ),
        "password",
        ("The connection string is {s}", 'conn = "{s}"'),
    ),
    "jwt": (
        _jwt,
        "jwt",
        ("Authorization: Bearer {s}", "The session token was {s}"),
    ),
    "redis-url-password": (
        lambda r: _Core(f"redis://:{{}}@{_host(r)}:6379/0", _url_password(r)),
        "password-in-url",
        ("REDIS_URL={s}", "The cache is at {s}"),
    ),
    "npm-token": (
        lambda r: "npm_" + _pick(r, ALNUM, 36),
        "npm-token",
        ("Publish with {s} from CI", "NPM_TOKEN={s}"),
    ),
    "vault-token": (
        lambda r: "hvs." + _pick(r, ALNUM + "-_", 90),
        "vault-token",
        ("VAULT_TOKEN={s}", "The root token was {s}"),
    ),
    "authorization-header": (
        lambda r: _pick(r, ALNUM, 40),
        "authorization-header",
        (
            'curl -H "Authorization: Bearer {s}" https://api.example.com/v1',
            "Authorization: Token {s}",
        ),
    ),
    "high-entropy-assignment": (
        lambda r: _pick(r, ALNUM, 32),
        "",  # any kind: a keyword or an entropy finding
        (
            'client_secret = "{s}"',
            "API_KEY={s}",
            "export SIGNING_SECRET='{s}'",
            'secret: "{s}"',
        ),
    ),
    "password-assignment": (
        _password,
        "password",
        (
            'DB_PASSWORD="{s}"',
            "password: {s}",
            'db.connect(user="app", password="{s}")',
        ),
    ),
}


def rng_prefix(rng: random.Random, prefixes: list[str]) -> str:
    return rng.choice(prefixes)


def rng_choice_openai(rng: random.Random) -> str:
    form = rng.randrange(3)
    if form == 0:  # the legacy form
        return f"sk-{_pick(rng, ALNUM, 20)}T3BlbkFJ{_pick(rng, ALNUM, 20)}"
    if form == 1:  # project keys
        return f"sk-proj-{_pick(rng, ALNUM + '-_', 74)}T3BlbkFJ{_pick(rng, ALNUM + '-_', 74)}"
    return f"sk-{_pick(rng, ALNUM, 48)}"


def corpus(
    seed: int = SEED, per_kind: int = PER_KIND
) -> list[tuple[str, str, str, str]]:
    """Returns ``(corpus kind, expected kind, text, secret)`` samples,
    reproducibly; ``secret`` is what must not be left once redacted."""
    rng = random.Random(seed)
    out = []
    for name, (make, expected, lines) in KINDS.items():
        for i in range(per_kind):
            made = make(rng)
            secret = made.core if isinstance(made, _Core) else made
            line = lines[i % len(lines)]
            password = _url_password(rng)
            text = line.format(s=made, pw=password, host=_host(rng))
            if "{s}" not in line:
                secret = password
            if name == "private-key-pem":
                secret = made.split("\n")[1]  # the key's first line of base64
            out.append((name, expected, text, secret))
    return out


def locomo_turns() -> list[str]:
    data = json.loads(LOCOMO.read_text())
    turns = []
    for conversation in data:
        sessions = conversation["conversation"]
        for key, value in sessions.items():
            if key.startswith("session_") and isinstance(value, list):
                turns.extend(f"{t['speaker']}: {t['text']}" for t in value)
    return turns


def project_files() -> list[Path]:
    files = subprocess.run(
        ["git", "ls-files", "docs", "*.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    own = {"hub/secrets.py", "benchmarks/bench_secrets.py", "tests/hub/test_secrets.py"}
    return [ROOT / f for f in files if f not in own and (ROOT / f).is_file()]


def detection() -> list[str]:
    rows = ["| kind | samples | found | named as expected |", "|---|---:|---:|---:|"]
    totals = [0, 0, 0]
    missed: list[str] = []
    by_kind: dict[str, list[int]] = {}
    for name, expected, text, secret in corpus():
        found = find_secrets(text)
        hit = secret not in redact_secrets(text, found)
        named = hit and (not expected or any(s.kind == expected for s in found))
        counts = by_kind.setdefault(name, [0, 0, 0])
        counts[0] += 1
        counts[1] += hit
        counts[2] += named
        if not hit and len(missed) < 10:
            missed.append(f"{name}: {text[:60]!r}")
    for name, (n, hit, named) in by_kind.items():
        rows.append(
            f"| {name} | {n} | {hit} ({hit / n:.0%}) | {named} ({named / n:.0%}) |"
        )
        totals = [totals[0] + n, totals[1] + hit, totals[2] + named]
    n, hit, named = totals
    rows.append(
        f"| **all** | {n} | {hit} ({hit / n:.1%}) | {named} ({named / n:.1%}) |"
    )
    if missed:
        rows += ["", "Missed (first 10):", "", *(f"- `{m}`" for m in missed)]
    return rows


def false_alarms() -> list[str]:
    rows = ["| text | lines | false alarms |", "|---|---:|---:|"]
    details: list[str] = []
    turns = locomo_turns()
    hits = [(t, s) for t in turns for s in find_secrets(t)]
    rows.append(f"| LoCoMo turns | {len(turns)} | {len(hits)} |")
    details += [f"LoCoMo: {s.kind}: {t[s.start : s.end]!r}" for t, s in hits[:10]]
    for label, suffix in (("docs/ (Markdown)", ".md"), ("*.py", ".py")):
        lines = 0
        found = []
        for path in project_files():
            if path.suffix != suffix:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            lines += text.count("\n") + 1
            found += [(path, text, s) for s in find_secrets(text)]
        rows.append(f"| {label} | {lines} | {len(found)} |")
        details += [
            f"{p.relative_to(ROOT)}:{s.line}: {s.kind}: {t[s.start : s.end][:40]!r}"
            for p, t, s in found[:20]
        ]
    if details:
        rows += ["", "What was reported:", "", *(f"- `{d}`" for d in details)]
    return rows


def _timed(text: str, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        find_secrets(text)
        times.append((time.perf_counter() - started) * 1000)
    return times


FRESH = """
import time
started = time.perf_counter()
from ctx.hub.secrets import find_secrets
find_secrets("The Stripe key is sk_live_" + "a1B2" * 6)
print((time.perf_counter() - started) * 1000)
"""


def speed() -> list[str]:
    turns = locomo_turns()
    big, size = [], 0
    for turn in turns:
        if size + len(turn) + 1 > 256 * 1024:
            break
        big.append(turn)
        size += len(turn) + 1
    text = "\n".join(big)
    short = (
        "Deploys go through the staging cluster first; the on-call rota is in the wiki."
    )
    keyed = "The staging API key is sk_live_" + "Q7x" * 8 + " (rotated monthly)."
    find_secrets(keyed)  # load the detectors
    rows = ["| text | p50 | max |", "|---|---:|---:|"]
    for label, sample, repeat in (
        (f"256 KB memory ({len(big)} LoCoMo turns)", text, 5),
        ("short memory, no secret word (gated)", short, 200),
        ("short memory holding a key", keyed, 200),
    ):
        times = _timed(sample, repeat)
        rows.append(
            f"| {label} | {statistics.median(times):.2f} ms | {max(times):.2f} ms |"
        )
    fresh = [
        float(
            subprocess.run(
                [sys.executable, "-c", FRESH],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for _ in range(3)
    ]
    rows.append(
        f"| first scan in a fresh process (loads the library) | {statistics.median(fresh):.0f} ms | {max(fresh):.0f} ms |"
    )
    gated = sum(not could_hold_secret(t) for t in turns)
    rows += [
        "",
        f"The gate passes {len(turns) - gated} of {len(turns)} LoCoMo turns to the detectors ({gated} skip them).",
    ]
    return rows


NOTES = """\
## Notes

- The library: `bc-detect-secrets`, the fork of Yelp's `detect-secrets`
  kept by Palo Alto Networks (Bridgecrew, for checkov): released monthly
  (1.5.52, 2026-09), pure Python, Apache-2.0. Yelp's own last release is
  1.5.0 (2024-05). Both were tried on 2026-11-28: their ad-hoc scan
  (`scan_line`, every token treated as a possible secret) took 9-13 s on
  256 KB of LoCoMo and flagged 130,000-144,000 high-entropy "secrets" in
  its 5,882 turns, so ctx calls the plugins' `analyze_string` itself and
  applies the library's filters (`ctx/hub/secrets.py`). Also looked at:
  `deepsecrets` (pygments, pydantic; a code scanner), Betterleaks'
  Python bindings (a Go engine behind ctypes, young third-party
  packages), `whispers` (structured files, not prose).
- The two reports in `*.py` are the test fixtures' `https://user:s3cret@`:
  passwords in URLs, reported as the scan should.
- A scanned import of 5,000 LoCoMo turns took 0.3-0.45 s more than an
  unscanned one (0.45-0.75 s, load 5-6): 60-90 µs a memory.
"""


def main() -> None:
    started = datetime.now(UTC)
    from importlib.metadata import version

    sys.path.insert(0, str(HERE))
    from _bench_common import machine_lines

    loads = [os.getloadavg()[0]]
    sections = [
        ("Detection (real-format secrets, generated)", detection()),
        ("False alarms", false_alarms()),
        ("Speed", speed()),
    ]
    loads.append(os.getloadavg()[0])
    lines = [
        "# Secrets kept out of the store",
        "",
        "`benchmarks/bench_secrets.py`: the scan every write runs (`ctx.hub.secrets`).",
        "",
        *machine_lines(
            started, loads, [("bc-detect-secrets", version("bc-detect-secrets"))]
        ),
    ]
    for title, rows in sections:
        lines += ["", f"## {title}", "", *rows]
    lines += ["", NOTES.rstrip()]
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
