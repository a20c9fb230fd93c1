"""Secrets kept out of the store: the screen every store a workspace opens has.

Every write path (remember, edit, import, ingest, prime, the MCP and HTTP
writes, the hooks' ``<ctx:remember>``, Dream, sessions) ends in the
engine's ``Store.write``, which shows :class:`SecretScreen` the write before
any object is written. What the screen does is the store's
``[secrets] mode`` (``config.toml``), or ``allow`` for a command run with
``--allow-secret``:

- ``refuse`` (the default): the new text of a write is scanned
  (:func:`ctx.hub.secrets.find_secrets`); a secret refuses the whole write
  with :class:`SecretFoundError`, one line naming its kind and where
  (field and line), and nothing is written.
- ``redact``: each secret is replaced with ``[REDACTED:<kind>]`` and the
  write is made.
- ``allow``: nothing is scanned.

New text is what the tip the write builds on does not hold already: the
lines of each field of a memory that its old version lacked, a file's new
strings, the commit's summary and its ``Ctx-Reason``. So a memory stored
with ``--allow-secret`` can still be tagged or linked.

A merge or a pull is never refused (that would block a team on another
writer's history): the secrets in the text it brings are reported in its
result, for the user to rotate and redact.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from ctx.engine import (
    MEMORY_ID_PATTERN,
    CorruptStoreError,
    InvalidInputError,
    Memory,
    PendingWrite,
    SecretFinding,
    Snapshot,
    decode_memory,
    encode,
    is_memory_path,
)

if TYPE_CHECKING:
    # The scan (ctx.hub.secrets) loads when a write is screened: a command
    # that only reads opens its store with a screen it never calls.
    from ctx.hub.secrets import FoundSecret

__all__ = ["SECRET_MODES", "SecretFoundError", "SecretMode", "SecretScreen"]

SecretMode = Literal["refuse", "redact", "allow"]
SECRET_MODES: tuple[SecretMode, ...] = ("refuse", "redact", "allow")

_JSON = msgspec.json.Encoder(order="deterministic")

_MEMORY_ID = re.compile(rf"\b{MEMORY_ID_PATTERN}\b")
"""A memory id (a ULID) in a commit's summary, which the engine writes there
(``Remember fact <id>: ...``): ctx's own id, no secret, and 26 characters
that would pass the scan's gate (:func:`~ctx.hub.secrets.could_hold_secret`)
and load the detectors (about 0.2 s) for every write. The summary's other
text comes from the fields, which are scanned on their own."""


class SecretFoundError(InvalidInputError):
    """A write was refused: its new text holds a secret.

    Attributes:
        findings: Every secret found, in the order of the write's files.
    """

    def __init__(self, findings: tuple[SecretFinding, ...]) -> None:
        first = findings[0]
        more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        super().__init__(
            f"Refused: a secret ({first.kind}) in {first.place()}{more}; "
            "nothing was written.",
            hint="Take it out; --allow-secret stores it anyway, and "
            '[secrets] mode = "redact" in the store\'s config.toml stores '
            f"[REDACTED:{first.kind}] in its place.",
        )
        self.findings = findings


class _Field(msgspec.Struct, frozen=True):
    """One text of a file: its name, its text, and the lines it had."""

    name: str
    text: str
    old: frozenset[str]


class SecretScreen:
    """The screen a workspace gives its store (see the module's docstring).

    Args:
        mode: Returns the mode in force; asked at each write, so that a
            store opened to read never reads the config.
    """

    def __init__(self, mode: Callable[[], SecretMode]) -> None:
        self._mode = mode

    def check(self, before: Snapshot, pending: PendingWrite) -> PendingWrite:
        """Returns ``pending`` as it is to be written, or raises.

        Raises:
            SecretFoundError: in ``refuse`` mode, the new text holds a
                secret; in ``redact`` mode, a path it writes holds one (a
                path is not redacted: a session's folder, a section's file).
        """
        mode = self._mode()
        if mode == "allow":
            return pending
        findings: list[SecretFinding] = []
        changes: dict[str, bytes | None] = {}
        values: list[tuple[str, str]] = []  # (secret, kind): for the summary
        for path, content in pending.changes.items():
            if content is None:
                changes[path] = content
                continue
            found, redacted = self._file(before, path, content, values, writing=True)
            findings += found
            changes[path] = redacted if found else content
        summary = _scrubbed(pending.summary, values)
        findings += _message_findings("summary", _MEMORY_ID.sub("<id>", summary))
        reason = pending.intent.reason
        if reason:
            reason = _scrubbed(reason, values)
            findings += _message_findings("reason", reason)
        # The writer's name goes into every commit (`Ctx-Agent:`) and log
        # line: a token given as --agent is a secret in history all the same.
        agent = pending.intent.agent
        named = _message_findings("agent", agent) if agent else []
        findings += named
        # So does the session's id (`Ctx-Session:`).
        session = pending.intent.session
        in_session = _message_findings("session", session) if session else []
        findings += in_session
        if not findings:
            return pending
        # Compared as a path may hold it: a section's file name is its
        # heading lower-cased, "_" made "-".
        said = [v for v, _ in values] + ([session] if in_session and session else [])
        paths = [_bare(path) for path in pending.changes]
        in_path = any(_bare(v) in path for v in said for path in paths)
        if mode == "refuse" or in_path:
            raise SecretFoundError(tuple(findings))
        return PendingWrite(
            summary=_redacted_text(summary),
            intent=msgspec.structs.replace(
                pending.intent,
                reason=_redacted_text(reason) if reason else reason,
                agent=_REDACTED_AGENT if named else agent,
                session=_REDACTED_AGENT if in_session else session,
            ),
            changes=changes,
        )

    def scan(
        self, before: Snapshot, changes: Mapping[str, bytes | None]
    ) -> tuple[SecretFinding, ...]:
        """Returns the secrets in the new text of a merge's ``changes``."""
        if self._mode() == "allow":
            return ()
        found: list[SecretFinding] = []
        for path, content in changes.items():
            if content is not None:
                found += self._file(before, path, content, [])[0]
        return tuple(found)

    def _file(
        self,
        before: Snapshot,
        path: str,
        content: bytes,
        values: list[tuple[str, str]],
        *,
        writing: bool = False,
    ) -> tuple[list[SecretFinding], bytes]:
        """Returns the secrets in a file's new text, and the file redacted.

        ``writing``: a write's file, not one a merge brought (which is on
        the other branch, under its id).
        """
        old = before.read(path)
        memory = _memory(path, content)
        if memory is not None:
            fields = list(_memory_fields(memory, _memory(path, old) if old else None))
        else:
            fields = list(_json_fields(content, old))
        found: list[SecretFinding] = []
        redacted: dict[str, str] = {}
        mid = memory.id if memory is not None else None
        for field in fields:
            secrets = _new_secrets(field)
            if not secrets:
                continue
            found += [
                SecretFinding(
                    path=path,
                    memory=mid,
                    kind=s.kind,
                    field=field.name,
                    line=s.line,
                    new=writing and old is None,
                )
                for s in secrets
            ]
            values += [(field.text[s.start : s.end], s.kind) for s in secrets]
            redacted[field.name] = _redacted(field.text, secrets)
        if not found:
            return [], content
        if memory is not None:
            return found, encode(_redacted_memory(memory, redacted))
        return found, _redacted_json(content, redacted)


# -- the fields of a file ---------------------------------------------------------


def _memory(path: str, content: bytes) -> Memory | None:
    if not is_memory_path(path):
        return None
    try:
        return decode_memory(content, path)
    except CorruptStoreError:
        return None


def _lines(text: str | None) -> frozenset[str]:
    return frozenset(text.split("\n")) if text else frozenset()


def _memory_fields(memory: Memory, old: Memory | None) -> Iterator[_Field]:
    def field(name: str, text: str | None, was: str | None) -> Iterator[_Field]:
        if text and text != was:
            yield _Field(name, text, _lines(was))

    yield from field("title", memory.title, old.title if old else None)
    yield from field("body", memory.body, old.body if old else None)
    yield from field(
        "tags", "\n".join(memory.tags), "\n".join(old.tags) if old else None
    )
    # The names of its meta fields are stored as they are given, too.
    for n, (key, value) in enumerate(memory.meta.items(), start=1):
        name, held = _meta_labels(n, key)
        if old is None or key not in old.meta:
            yield from field(name, key, None)
        yield from field(held, value, old.meta.get(key) if old else None)
    if memory.source is not None:
        was = old.source if old else None
        yield from field("source", memory.source.file, was.file if was else None)
        yield from field("section", memory.source.section, was.section if was else None)


def _json_fields(content: bytes, old: bytes | None) -> Iterator[_Field]:
    """Yields the strings of a JSON file (a link, a view, ...) by key path.

    A file that is not JSON is one text.
    """
    try:
        data = msgspec.json.decode(content)
    except msgspec.DecodeError:
        text = content.decode("utf-8", "replace")
        was = old.decode("utf-8", "replace") if old else None
        if text != was:
            yield _Field("content", text, _lines(was))
        return
    olds: dict[str, str] = {}
    if old is not None:
        try:
            olds = dict(_strings(msgspec.json.decode(old), ""))
        except msgspec.DecodeError:
            olds = {}
    for name, text in _strings(data, ""):
        if text != olds.get(name):
            yield _Field(name, text, _lines(olds.get(name)))


def _strings(value: Any, name: str) -> Iterator[tuple[str, str]]:
    # Any: decoded JSON of a file the engine wrote (a link, view, proposal).
    if isinstance(value, str):
        yield name or "content", value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{name}.{key}" if name else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{name}.{i}")


def _new_secrets(field: _Field) -> list[FoundSecret]:
    """Returns the secrets on the lines of ``field`` it did not have before.

    A secret over several lines (a private key) is new if any of its lines
    is: every key of a kind opens with the same ``-----BEGIN`` line.
    """
    from ctx.hub.secrets import could_hold_secret, find_secrets

    if not could_hold_secret(field.text):
        return []
    lines = field.text.split("\n")

    def is_new(secret: FoundSecret) -> bool:
        last = field.text.count("\n", 0, secret.end)  # the line it ends on
        return any(line not in field.old for line in lines[secret.line - 1 : last + 1])

    return [s for s in find_secrets(field.text) if not field.old or is_new(s)]


# -- redaction -----------------------------------------------------------------------


def _redacted(text: str, secrets: list[FoundSecret]) -> str:
    out, last = [], 0
    for secret in sorted(secrets, key=lambda s: s.start):
        out += [text[last : secret.start], f"[REDACTED:{secret.kind}]"]
        last = secret.end
    return "".join([*out, text[last:]])


def _redacted_text(text: str) -> str:
    from ctx.hub.secrets import find_secrets

    return _redacted(text, find_secrets(text))


def _bare(text: str) -> str:
    """Returns ``text``'s letters and digits, lower-cased, as paths hold names."""
    return "".join(c for c in text.casefold() if c.isalnum())


def _meta_labels(n: int, key: str) -> tuple[str, str]:
    """Returns how a finding names a memory's meta field ``n``.

    Its name, and its value: by number where the name may be the secret.
    """
    from ctx.hub.secrets import could_hold_secret

    value = f"meta value {n}" if could_hold_secret(key) else f"meta.{key}"
    return f"meta name {n}", value


def _redacted_memory(memory: Memory, redacted: dict[str, str]) -> Memory:
    meta: dict[str, str] = {}
    for n, (key, value) in enumerate(memory.meta.items(), start=1):
        name, held = _meta_labels(n, key)
        new_key = redacted.get(name, key)
        if new_key in meta:
            raise InvalidInputError(
                "Two of the memory's meta names would be one once their "
                "secrets are redacted.",
                hint="Take the secrets out of the meta names.",
            )
        meta[new_key] = redacted.get(held, value)
    source = memory.source
    if source is not None:
        source = msgspec.structs.replace(
            source,
            file=redacted.get("source", source.file),
            section=redacted.get("section", source.section),
        )
    tags = redacted["tags"].split("\n") if "tags" in redacted else memory.tags
    return msgspec.structs.replace(
        memory,
        title=redacted.get("title", memory.title),
        body=redacted.get("body", memory.body),
        tags=tuple(sorted(set(tags))),
        meta=meta,
        source=source,
    )


def _redacted_json(content: bytes, redacted: dict[str, str]) -> bytes:
    try:
        data = msgspec.json.decode(content)
    except msgspec.DecodeError:
        return redacted.get("content", "").encode("utf-8")
    return _JSON.encode(_replaced(data, "", redacted))


def _replaced(value: Any, name: str, redacted: dict[str, str]) -> Any:
    # Any: decoded JSON, as in _strings.
    if isinstance(value, str):
        return redacted.get(name or "content", value)
    if isinstance(value, dict):
        return {
            key: _replaced(item, f"{name}.{key}" if name else str(key), redacted)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [
            _replaced(item, f"{name}.{i}", redacted) for i, item in enumerate(value)
        ]
    return value


def _scrubbed(text: str, values: list[tuple[str, str]]) -> str:
    """Returns a commit's summary or reason without the write's secrets.

    A secret may be there whole, or cut short by a headline (``AKIA12…``).
    """
    for value, kind in values:
        text = text.replace(value, f"[REDACTED:{kind}]")
        if text.endswith("…"):
            head = text[:-1]
            for n in range(min(len(value), len(head)), 3, -1):
                if head.endswith(value[:n]):
                    text = f"{head[:-n]}[REDACTED:{kind}]…"
                    break
    return text


_REDACTED_AGENT = "redacted"
"""The writer's name recorded where the one given held a secret (redact mode)."""


def _message_findings(name: str, text: str) -> list[SecretFinding]:
    from ctx.hub.secrets import find_secrets

    return [
        SecretFinding(path="", memory=None, kind=s.kind, field=name, line=s.line)
        for s in find_secrets(text)
    ]
