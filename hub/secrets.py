"""Finding secrets in a text: cloud keys, forge and chat tokens, private keys.

A scan (:func:`find_secrets`) runs these steps on one text:

1. The gate: a text with no run of 16 token characters, no word that names
   a secret (``password``, ``token``, ``key``, ...), no ``BEGIN`` and no
   ``user:pass@`` cannot hold anything the detectors below find, so it is
   passed without loading them (loading detect-secrets costs about 0.2 s,
   most of it ``requests``, which its plugins import to verify keys online;
   ctx never verifies).
2. The detectors: detect-secrets' plugins (``bc-detect-secrets``, the
   maintained fork of Yelp's library) for AWS keys, GitHub tokens, Slack,
   Stripe, Twilio, SendGrid, npm, Mailchimp, Discord, Azure storage keys,
   Square, Artifactory, JWTs, private keys, passwords in URLs, keyword
   assignments and high-entropy strings; and a few of ctx's own, in the
   library's plugin form, for formats the library lacks (GitLab, GitHub
   fine-grained, Google API keys, ``sk-`` keys of OpenAI and the like).
   Each runs on every line; the private-key detector on the whole text, as
   a key spans lines.
3. The library's filters drop what only looks like a secret: sequences,
   UUIDs, ids, templates (``${X}``, ``<token>``), indirect references
   (``password = get_password()``) and values with no letter or digit.
4. A keyword assignment's value must look like a secret, not like a word:
   one token of at least 8 characters mixing letters with digits or
   symbols (tuned on LoCoMo and this project's docs and code, where prose
   such as ``Password: I forgot it`` and code such as ``token =
   self.next()`` are common; see ``benchmarks/results/secrets.md``).
5. Overlapping findings keep the most specific kind (a JWT in a
   ``token = "..."`` assignment is a ``jwt``).

Each :class:`FoundSecret` names its kind (``aws-access-key``), its line and
its place in the text, never its value, so that no message repeats it.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from itertools import pairwise
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector

__all__ = ["FoundSecret", "could_hold_secret", "find_secrets", "redact_secrets"]


class FoundSecret(msgspec.Struct, frozen=True, kw_only=True):
    """One secret found in a text.

    Attributes:
        kind: What it is: ``aws-access-key``, ``github-token``,
            ``private-key``, ``password-in-url``, ``high-entropy-string``...
        line: The line it starts on, from 1.
        start: Where it starts in the text (a character offset).
        end: Where it ends in the text.
    """

    kind: str
    line: int
    start: int
    end: int


# -- the gate -------------------------------------------------------------------

# Every detector needs one of these: a token of 16 characters or more (most
# provider formats, and a base64 string above its entropy limit, which needs
# 23 distinct characters), 9 hex digits (a hex string above its limit), the
# short prefixes of the formats that may be shorter (Slack, JWT,
# Artifactory), a word that names a secret (every word of the keyword
# detector's list holds one of these), a PEM or PuTTY header, or
# credentials in a URL. Four expressions, each simple, cost a sixth of
# their alternation (40 against 180 ms on 256 KB).
_KEYWORD = r"pass|pwd|token|secret|key|contrase"
_GATES = (
    re.compile(r"[A-Za-z0-9+/=_\-.]{16,}+"),
    re.compile(r"[0-9a-fA-F]{9,}+"),
    re.compile(rf"xox|eyJ|AKC|BEGIN|PuTTY|{_KEYWORD}", re.IGNORECASE),
    re.compile(r"://[^\s/@]*:[^\s/@]*@"),
)


def could_hold_secret(text: str) -> bool:
    """Returns whether the detectors could find anything in ``text``.

    False means surely nothing (the scan is skipped); true means scan.
    """
    return any(gate.search(text) is not None for gate in _GATES)


def _gated_lines(text: str, starts: list[int]) -> list[int]:
    """Returns the numbers (from 0) of the lines the gate lets through.

    ``starts`` holds where each line of ``text`` starts.
    """
    numbers = {
        bisect_right(starts, match.start()) - 1
        for gate in _GATES
        for match in gate.finditer(text)
    }
    return sorted(numbers)


# -- the detectors ----------------------------------------------------------------

_KINDS = {
    "ArtifactoryDetector": "artifactory-token",
    "AzureStorageKeyDetector": "azure-storage-key",
    "BasicAuthDetector": "password-in-url",
    "DiscordBotTokenDetector": "discord-token",
    "GitHubTokenDetector": "github-token",
    "JwtTokenDetector": "jwt",
    "MailchimpDetector": "mailchimp-key",
    "NpmDetector": "npm-token",
    "PrivateKeyDetector": "private-key",
    "SendGridDetector": "sendgrid-key",
    "SlackDetector": "slack-token",
    "SquareOAuthDetector": "square-oauth-secret",
    "StripeDetector": "stripe-key",
    "TwilioKeyDetector": "twilio-key",
    "GitHubFineGrainedDetector": "github-token",
    "GitLabTokenDetector": "gitlab-token",
    "GoogleApiKeyDetector": "google-api-key",
    "SkKeyDetector": "openai-key",
    "UrlPasswordDetector": "password-in-url",
    "NpmTokenDetector": "npm-token",
    "VaultTokenDetector": "vault-token",
    "AuthorizationDetector": "authorization-header",
}
"""The kind each detector reports (AWS, keyword and entropy findings are
named by their value, see :func:`_kind`). Left out of the library's set:
the IBM and SoftLayer detectors, which fire on any keyword near a long hex
or base64 word, and the Cloudant one; measured, they added false alarms on
this project's own code and nothing the others miss."""

_LINE_LIMIT = 100_000
"""Longer lines are not scanned (the library's own limit): a minified blob
is not a memory's text, and the regular expressions would be slow on it."""

_HEX_LIMIT = 3.0
_BASE64_LIMIT = 4.5
"""Shannon entropy limits of the high-entropy detectors (the library's
defaults): a quoted or assigned string above them is reported."""

# What a scan reads after the gate, as patterns ``re`` compiles on first use
# and keeps: every write loads this module for the gate, few texts pass it.
_ACCESS_KEY = r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"
_PASSWORD_WORD = r"(?i)pass|pwd|contrase"
_PEM_BLOCK = r"(?s)-*BEGIN[A-Z0-9 ]*PRIVATE KEY-*.*?(?:END[A-Z0-9 ]*PRIVATE KEY-*|\Z)"
_SECRET_SHAPE = r"\S{8,}"
_LETTER = r"[A-Za-z]"
_NOT_NAME = r"[^A-Za-z_.\-]"
_FOLDER = r"[a-z][a-z0-9_.\-]*"
_WORD = r"[a-z]+|[A-Z][a-z]+|[A-Z_]+"
_LOCK = threading.Lock()


def _own_detectors() -> tuple[list[BasePlugin], list[BasePlugin]]:
    """Returns ctx's detectors for formats the library does not know.

    Tokens of a known form, asked early; the ``Authorization`` header's,
    asked after the library's forms, so that a JWT in one is named a JWT.
    """
    from detect_secrets.plugins.base import RegexBasedDetector

    class GitHubFineGrainedDetector(RegexBasedDetector):
        """GitHub fine-grained personal access tokens."""

        secret_type = "GitHub Fine-Grained Token"
        denylist = (re.compile(r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b"),)

    class GitLabTokenDetector(RegexBasedDetector):
        """GitLab's prefixed tokens (personal, deploy, feed, runner, ...)."""

        secret_type = "GitLab Token"
        denylist = (
            re.compile(
                r"\b(?:glpat|gldt|glft|glsoat|glrt|glcbt|glptt|gloas)-[\w-]{20,}"
            ),
            re.compile(r"\bGR1348941[\w-]{20,}"),
        )

    class GoogleApiKeyDetector(RegexBasedDetector):
        """Google Cloud and Firebase API keys."""

        secret_type = "Google API Key"
        denylist = (re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),)

    class UrlPasswordDetector(RegexBasedDetector):
        """A password in a URL, as RFC 3986 lets it be written.

        The library's detector stops at the sub-delimiters (``!*$;=...``)
        that a URL's user and password may hold unescaped, and wants a
        user: Redis's ``redis://:PASSWORD@host`` has none.
        """

        secret_type = "URL Password"
        denylist = (re.compile(r"://[^\s:/?#\[\]@{}<>\"']*:([^\s/?#\[\]@{}<>\"']+)@"),)

    class SkKeyDetector(RegexBasedDetector):
        """``sk-`` API keys of OpenAI and the services that copied the form.

        OpenAI's project, service account and admin keys; Anthropic's,
        DeepSeek's, ...
        """

        secret_type = "sk- API Key"
        denylist = (re.compile(r"\bsk-(?:[a-z0-9]{2,10}-){0,2}[A-Za-z0-9_-]{32,}"),)

    class NpmTokenDetector(RegexBasedDetector):
        """npm's access tokens, as shown and pasted (the library's: ``.npmrc``)."""

        secret_type = "npm Token"
        denylist = (re.compile(r"\bnpm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),)

    class VaultTokenDetector(RegexBasedDetector):
        """HashiCorp Vault's service, batch and recovery tokens."""

        secret_type = "Vault Token"
        denylist = (re.compile(r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}"),)

    class AuthorizationDetector(RegexBasedDetector):
        """The credentials of an HTTP ``Authorization`` header.

        As a curl command or a request log holds them: Bearer, Basic, Token.
        """

        secret_type = "Authorization Header"
        denylist = (
            re.compile(
                r"(?i)\bauthorization:\s*(?:bearer|basic|token)\s+"
                r"([A-Za-z0-9._~+/-]{16,}=*)"
            ),
        )

    early: list[BasePlugin] = [
        GitHubFineGrainedDetector(),
        GitLabTokenDetector(),
        GoogleApiKeyDetector(),
        SkKeyDetector(),
        NpmTokenDetector(),
        VaultTokenDetector(),
        UrlPasswordDetector(),
    ]
    return early, [AuthorizationDetector()]


@cache
def _detectors() -> tuple[list[BasePlugin], BasePlugin, list[Callable[..., bool]]]:
    """Returns the detectors and the library's filters.

    The line detectors come most specific first; the private-key one, which
    reads a whole text, apart.
    """
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins import (
        artifactory,
        aws,
        azure_storage_key,
        basic_auth,
        discord,
        github_token,
        high_entropy_strings,
        jwt,
        keyword,
        mailchimp,
        npm,
        private_key,
        sendgrid,
        slack,
        square_oauth,
        stripe,
        twilio,
    )

    early, late = _own_detectors()
    lines: list[BasePlugin] = [
        aws.AWSKeyDetector(),
        github_token.GitHubTokenDetector(),
        *early,
        slack.SlackDetector(),
        stripe.StripeDetector(),
        twilio.TwilioKeyDetector(),
        sendgrid.SendGridDetector(),
        npm.NpmDetector(),
        mailchimp.MailchimpDetector(),
        discord.DiscordBotTokenDetector(),
        azure_storage_key.AzureStorageKeyDetector(),
        square_oauth.SquareOAuthDetector(),
        artifactory.ArtifactoryDetector(),
        jwt.JwtTokenDetector(),
        basic_auth.BasicAuthDetector(),
        *late,
        keyword.KeywordDetector(),
        high_entropy_strings.HexHighEntropyString(limit=_HEX_LIMIT),
        high_entropy_strings.Base64HighEntropyString(limit=_BASE64_LIMIT),
    ]
    filters: list[Callable[..., bool]] = [
        heuristic.is_sequential_string,
        heuristic.is_potential_uuid,
        heuristic.is_templated_secret,
        heuristic.is_prefixed_with_dollar_sign,
        heuristic.is_not_alphanumeric_string,
    ]
    return lines, private_key.PrivateKeyDetector(), filters


@cache
def _denylist() -> re.Pattern[str]:
    from detect_secrets.plugins.keyword import DENYLIST

    return re.compile("|".join(DENYLIST), re.IGNORECASE)


def _denylisted(line: str) -> re.Match[str] | None:
    """Returns where ``line`` names a secret as the keyword detector reads it.

    The detector's own expressions are slow (0.7 ms a line); this is 10 µs.
    """
    return _denylist().search(line)


def _values(plugin: BasePlugin, line: str) -> Iterator[tuple[str, int]]:
    """Yields what ``plugin`` finds in ``line``, and where, past its limits."""
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.plugins.keyword import (
        CONFIG_DENYLIST_REGEX_TO_GROUP,
        QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
        KeywordDetector,
    )

    if isinstance(plugin, KeywordDetector):
        if _denylisted(line) is None:
            return  # each of its expressions starts with a denylisted word
        # Both the quoted forms of code and the bare ``KEY=value`` and
        # ``key: value`` of config files, env files and connection strings.
        for table in (
            QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
            CONFIG_DENYLIST_REGEX_TO_GROUP,
        ):
            found = list(plugin.analyze_string(line, denylist_regex_to_group=table))
            if found:
                yield from _placed(line, (v.strip().rstrip(";,") for v in found))
                return
        return
    if isinstance(plugin, HighEntropyStringsPlugin):
        candidates = plugin.analyze_string(line)
        limit = plugin.entropy_limit
        yield from _placed(
            line,
            (v for v in candidates if plugin.calculate_shannon_entropy(v) > limit),
        )
        return
    if isinstance(plugin, RegexBasedDetector):
        yield from _matched(plugin, line)


def _placed(line: str, values: Iterable[str]) -> Iterator[tuple[str, int]]:
    for value in values:
        if value:
            for at in _occurrences(line, value):
                yield value, at


def _matched(plugin: RegexBasedDetector, line: str) -> Iterator[tuple[str, int]]:
    """Yields the secrets a regular-expression detector finds, and where.

    The detector reports a match's captured group when its expression has
    one: the secret itself after its context (``aws ... key = (SECRET)``),
    or only a prefix (``(ghp|gho)_...``: then the whole match is the
    secret). What it reports decides what counts; the match, where it is.
    """
    reported = set(plugin.analyze_string(line))  # JWT: formally valid only
    if not reported:
        return
    for regex in plugin.denylist:
        for match in regex.finditer(line):
            groups = [i for i in range(1, regex.groups + 1) if match.group(i)]
            if not {match.group(0), *(match.group(i) for i in groups)} & reported:
                continue
            if groups and match.start(groups[0]) > match.start():
                value, at = match.group(groups[0]), match.start(groups[0])
            else:
                value, at = match.group(0), match.start()
            bare = value.strip(" \t\"'=:")  # Artifactory's match holds its delimiters
            if bare:
                yield bare, at + value.find(bare)


def _looks_secret(value: str) -> bool:
    """Returns whether a keyword's value looks like a secret, not a name.

    A name (``max_tokens``, ``OPENAI_API_KEY``, ``parts.password``) is
    letters joined by ``_ . -``; a secret has a digit or another symbol.
    """
    value = value.strip().rstrip(";,")
    return (
        re.fullmatch(_SECRET_SHAPE, value) is not None
        and re.search(_LETTER, value) is not None
        and re.search(_NOT_NAME, value) is not None
        and "(" not in value
        and not value.startswith(("$", "%"))
    )


def _is_placeholder(value: str) -> bool:
    """Returns whether a URL's password is a placeholder.

    That is one plain word (``user:token@``, ``user:password@``) or a
    constant's name.
    """
    return re.fullmatch(_WORD, value) is not None


_PLAIN_FORMS = frozenset(
    ["authorization-header", "npm-token", "vault-token", "password-in-url"]
)
"""Kinds whose pattern is a prefix and any characters: docs' examples fit it."""
_EXAMPLE = re.compile(
    r"(?i)(?:(?:your|my|the|an?|example|placeholder|here|changeme|change|me|"
    r"dummy|sample|redacted|token|secret|password|passwd|api|access|auth|key|"
    r"value|bearer|insert|put)[_.\-]?)+"
)
"""A placeholder made of nothing but such words: YOUR_ACCESS_TOKEN_HERE."""


def _is_example(value: str) -> bool:
    """Returns whether a token is a documentation's example, not a secret.

    Made of nothing but words such as "your", "example", "token", "here"
    (``YOUR_ACCESS_TOKEN_HERE``, ``hvs.example_token_here``), or of one
    character repeated (``npm_XXXX...``, ``xxxx``). A word of them inside
    other letters (``Secretly-Blue-Canary-42``, ``MySecretPass``) is not.
    """
    body = value[4:] if value[:4] in ("npm_", "hvs.", "hvb.", "hvr.") else value
    if len(set(body.lower()) - set("_-.")) <= 2:
        return True
    return _EXAMPLE.fullmatch(body) is not None


def _is_path(value: str) -> bool:
    """Returns whether a string is a URL's or a file's path.

    ``/api/x/ID``: every folder a lowercase word, however random the rest.
    """
    folders = value.split("/")[1:-1]
    return (
        value.startswith("/")
        and bool(folders)
        and all(re.fullmatch(_FOLDER, f) for f in folders)
    )


def _is_alphabet(value: str) -> bool:
    """Returns whether a string is an alphabet or a run of ranges, not a key.

    ``0123456789ABCDEFGHJKMNPQRSTVWXYZ`` has the entropy of a key but
    rises almost all the way: a random string of 16 characters or more
    falls back about every other character.
    """
    falls = sum(1 for a, b in pairwise(value) if b < a)
    return falls + 1 <= max(3, len(value) // 6)


def _kind(plugin: BasePlugin, value: str, line: str) -> str:
    name = type(plugin).__name__
    if name == "AWSKeyDetector":
        return (
            "aws-access-key" if re.fullmatch(_ACCESS_KEY, value) else "aws-secret-key"
        )
    if name == "SlackDetector" and value.lower().startswith("https://"):
        return "slack-webhook"
    if name == "KeywordDetector":
        before = line[: max(0, line.find(value))]
        return "password" if re.search(_PASSWORD_WORD, before) else "secret-assignment"
    if name in ("Base64HighEntropyString", "HexHighEntropyString"):
        return "high-entropy-string"
    return _KINDS.get(name, "secret")


def find_secrets(text: str) -> list[FoundSecret]:
    """Returns the secrets in ``text``, in the order they appear.

    Thread-safe; the detectors load on the first text that passes the gate.
    """
    if not could_hold_secret(text):
        return []
    with _LOCK:  # the library's plugins keep state on their objects
        lines, private, filters = _detectors()
        found = _private_keys(private, text)
        every = text.split("\n")
        starts = [0]
        for line in every[:-1]:
            starts.append(starts[-1] + len(line) + 1)
        for number in _gated_lines(text, starts):
            line = every[number]
            if len(line) <= _LINE_LIMIT:
                found.extend(
                    _scan_line(lines, filters, line, number + 1, starts[number])
                )
    return _without_overlaps(found)


def _private_keys(plugin: BasePlugin, text: str) -> list[FoundSecret]:
    if "PRIVATE KEY" not in text and "PuTTY" not in text:
        return []
    if not any(True for _ in plugin.analyze_string(text)):
        return []
    out = []
    for match in re.finditer(_PEM_BLOCK, text):
        line = text.count("\n", 0, match.start()) + 1
        out.append(
            FoundSecret(
                kind="private-key", line=line, start=match.start(), end=match.end()
            )
        )
    return out


def _scan_line(
    plugins: list[BasePlugin],
    filters: list[Callable[..., bool]],
    line: str,
    number: int,
    offset: int,
) -> Iterator[FoundSecret]:
    from detect_secrets.filters.heuristic import is_indirect_reference

    for plugin in plugins:
        keyword = type(plugin).__name__ == "KeywordDetector"
        for value, at in _values(plugin, line):
            if any(f(value) for f in filters):
                continue
            if keyword and (is_indirect_reference(line) or not _looks_secret(value)):
                continue
            kind = _kind(plugin, value, line)
            if kind == "password-in-url" and _is_placeholder(value):
                continue
            if kind in _PLAIN_FORMS and _is_example(value):
                continue  # Bearer YOUR_ACCESS_TOKEN_HERE, npm_XXXX..., hvs.example
            if kind == "high-entropy-string" and (
                _is_alphabet(value) or _is_path(value)
            ):
                continue
            if kind in _DIGEST_LOOKALIKES and _DIGEST_BEFORE.search(line, 0, at):
                continue  # a content hash said to be one: sha256:..., commit=...
            # A pattern may match a token's head only (a Stripe key's first
            # 24 characters of 100): the secret runs to the token's end.
            tail = _DASHED_TAIL if kind in _DASHED else _TOKEN_TAIL
            end = tail.match(line, at + len(value))
            assert end is not None  # it matches the empty string
            yield FoundSecret(
                kind=kind, line=number, start=offset + at, end=offset + end.end()
            )


_DIGEST_LOOKALIKES = frozenset(["high-entropy-string", "azure-storage-key"])
"""Kinds a content hash is taken for: a long hex or base64 string."""
_DIGEST_BEFORE = re.compile(
    r"(?i)\b(?:sha(?:1|224|256|384|512)?|md5|blake2[bs]?|commit|digest|hash|"
    r"checksum|integrity|oid|revision)\s*[:=-]?\s*[\"']?$"
)
"""A word that says the string after it is a hash of some content (a
digest, a commit id, a lockfile's integrity): not a secret."""

_DASHED = frozenset(
    ["discord-token", "gitlab-token", "google-api-key", "openai-key", "vault-token"]
)
"""Kinds whose tokens hold ``-`` (a Discord token's signature): their tail
runs through it."""
_DASHED_TAIL = re.compile(r"[A-Za-z0-9_\-]*=*")
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_]*=*")
"""What may follow a detector's match in one token: a key's letters, digits
and ``_``, and base64's padding (not a sentence's full stop, nor a path or
a word joined by ``/`` or ``-``: ``AKIA.../prod-bucket``)."""


def _occurrences(line: str, value: str) -> Iterator[int]:
    at = line.find(value)
    while at >= 0:
        yield at
        at = line.find(value, at + len(value))


def _without_overlaps(found: list[FoundSecret]) -> list[FoundSecret]:
    # ``found`` lists private keys first, then each line's findings in the
    # order of the detectors, most specific first: the first to claim a span
    # keeps it.
    kept: list[FoundSecret] = []
    for secret in found:
        if all(secret.end <= k.start or secret.start >= k.end for k in kept):
            kept.append(secret)
    return sorted(kept, key=lambda s: s.start)


def redact_secrets(text: str, found: list[FoundSecret] | None = None) -> str:
    """Returns ``text`` with each secret replaced by ``[REDACTED:<kind>]``."""
    secrets = find_secrets(text) if found is None else found
    out, last = [], 0
    for secret in sorted(secrets, key=lambda s: s.start):
        out.append(text[last : secret.start])
        out.append(f"[REDACTED:{secret.kind}]")
        last = secret.end
    out.append(text[last:])
    return "".join(out)
