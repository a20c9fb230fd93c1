"""API keys: bearer tokens scoped to branches, kept as hashes in private state.

``ctx serve`` answers a request that presents a key only within that key's
scopes. A key is made by the store's owner (``ctx keys create``); its token,
``ctx_`` and 32 random bytes in URL-safe base64, is shown once and never
stored: the store keeps its SHA-256 (a token has 256 random bits, so a plain
hash is as strong as a slow one) and compares hashes with
:func:`hmac.compare_digest`.

Each key holds a label, read and write patterns (``fnmatch`` globs over
branch names, matched case-sensitively: ``main``, ``agent/*``, ``*``; a ``*``
also matches ``/``), an admin flag (admin keys may manage keys over HTTP;
the command line, run by the owner, always may), and its creation and
revocation times. A write pattern grants reading too: a key that may write a
branch may read what it wrote. A revoked key stays listed, and matches
nothing.

The keys live in ``<store>/private/keys.json`` (folder mode 0700, file mode
0600), beside the git repository and never in it; the folder holds a
``.gitignore`` of ``*`` so that a project repository holding ``.ctx/`` does
not take it either. Every change takes the folder's lock (``flock`` on
``keys.lock``, released by the kernel if its holder dies), reads the file,
and replaces it whole (a temporary file, fsync, ``os.replace``): concurrent
creates never lose a key, and a reader sees the old file or the new one.
:func:`authenticate` runs once per HTTP request, so a process keeps the file
it read and reads it again only when its inode, size or mtime changes.

Keys are not memories: they are in no commit, and ``ctx undo`` and
``ctx op log`` do not see them.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import hmac
import ipaddress
import os
import re
import secrets
import threading
import unicodedata
from collections.abc import Iterator, Sequence
from datetime import datetime
from fnmatch import fnmatchcase
from pathlib import Path

import msgspec

from ctx.engine import (
    CtxError,
    InvalidInputError,
    NotFoundError,
    ReadOnlyStoreError,
    StoreError,
    is_agent_name,
)
from ctx.hub.state import PRIVATE_FOLDER, private_folder, write_atomically
from ctx.hub.workspace import Workspace

__all__ = [
    "ApiKey",
    "AuthError",
    "CreatedKey",
    "RevokedKey",
    "authenticate",
    "create_key",
    "is_loopback",
    "keys_required",
    "list_keys",
    "revoke_key",
]

KEYS_FILE = "keys.json"
TOKEN_PREFIX = "ctx_"

_TOKEN_RE = re.compile(r"ctx_[A-Za-z0-9_-]{43}")
_BEARER_RE = re.compile(r" *[Bb][Ee][Aa][Rr][Ee][Rr] +(\S+) *")
_MAX_LABEL = 100
_MAX_PATTERN = 255
# Characters git refuses in a branch name; a pattern holding one matches none.
_NOT_IN_BRANCHES = set(" ~^:\\")
_PATTERN_HINT = "A pattern is a branch name with * and ? (`main`, `agent/*`, `*`)."


class AuthError(CtxError):
    """A request's key is missing, malformed, unknown or revoked (HTTP 401)."""


class ApiKey(msgspec.Struct, frozen=True, kw_only=True):
    """A key as anyone may see it: everything but its token and hash.

    Attributes:
        id: The key's id (8 hex digits), shown by ``ctx keys ls``.
        label: The owner's name for it, unique among keys not revoked.
        read: Branch patterns it may read.
        write: Branch patterns it may write (and read).
        admin: Whether it may manage keys over HTTP.
        created_at: When it was made.
        revoked_at: When it was revoked, or ``None``.
    """

    id: str
    label: str
    read: tuple[str, ...]
    write: tuple[str, ...]
    admin: bool
    created_at: datetime
    revoked_at: datetime | None = None

    def can_read(self, branch: str) -> bool:
        """Returns whether the key may read ``branch`` (write patterns count)."""
        return self.revoked_at is None and _matches(branch, self.read + self.write)

    def can_write(self, branch: str) -> bool:
        """Returns whether the key may write ``branch``."""
        return self.revoked_at is None and _matches(branch, self.write)

    def agent_name(self) -> str:
        """Returns who its writes are signed by when they name nobody.

        Its label, where that is an agent's name (letters, digits and
        ``_.@+-``), else ``key-<id>``: never the server's own login.
        """
        return self.label if is_agent_name(self.label) else f"key-{self.id}"

    def may_sign(self, agent: str) -> bool:
        """Returns whether its writes may be signed by ``agent``.

        By its own name; by an agent whose own branch (``agent/<name>``)
        it may write (a key for ``agent/claude*`` signs as claude or
        claude-code); by anyone if it is an admin key. A key for ``main``
        alone may not sign as a person it does not stand for.
        """
        return (
            self.admin or agent == self.agent_name() or self.can_write(f"agent/{agent}")
        )


class CreatedKey(msgspec.Struct, frozen=True, kw_only=True):
    """A new key and its token: the only time the token is known.

    Attributes:
        key: The key.
        token: The bearer token (``ctx_...``); the store keeps only its hash.
    """

    key: ApiKey
    token: str


class RevokedKey(msgspec.Struct, frozen=True, kw_only=True):
    """A revoked key.

    Attributes:
        key: The key, with its revocation time.
        changed: False when it was already revoked (nothing was written).
    """

    key: ApiKey
    changed: bool


class _StoredKey(msgspec.Struct, frozen=True, kw_only=True):
    """A key as ``keys.json`` holds it: the key and its token's hash."""

    key: ApiKey
    sha256: str


class _KeyFile(msgspec.Struct, frozen=True, kw_only=True):
    version: int = 1
    keys: list[_StoredKey] = []


_ENCODER = msgspec.json.Encoder(order="deterministic")
_Stamp = tuple[int, int, int, int]
_cache: dict[Path, tuple[_Stamp, _KeyFile]] = {}
_cache_lock = threading.Lock()


def _matches(branch: str, patterns: Sequence[str]) -> bool:
    return any(fnmatchcase(branch, pattern) for pattern in patterns)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def _keys_path(ws: Workspace) -> Path:
    return ws.path / PRIVATE_FOLDER / KEYS_FILE


def _stamp(st: os.stat_result) -> _Stamp:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _decode(data: bytes, path: Path) -> _KeyFile:
    try:
        return msgspec.json.decode(data, type=_KeyFile)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise StoreError(
            f"The key file {path} is not valid: {exc}.",
            hint="Restore it, or remove it and create the keys again.",
        ) from exc


def _read(path: Path) -> _KeyFile:
    """Returns the key file at ``path`` (none: no keys), cached by its stamp.

    Raises:
        StoreError: The file cannot be read, or is not a key file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return _KeyFile()
    except OSError as exc:
        raise StoreError(f"Cannot read the key file {path}: {exc.strerror}.") from exc
    with os.fdopen(fd, "rb") as file:
        stamp = _stamp(os.fstat(fd))
        with _cache_lock:
            cached = _cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        keys = _decode(file.read(), path)
    with _cache_lock:
        _cache[path] = (stamp, keys)
    return keys


@contextlib.contextmanager
def _locked(ws: Workspace) -> Iterator[Path]:
    """Holds the key file's lock; yields the key file's path.

    Raises:
        ReadOnlyStoreError: The store's folder cannot be written.
        StoreError: The private folder is not ours, or a file system error.
    """
    folder = ws.path / PRIVATE_FOLDER
    try:
        private_folder(ws.path)
        fd = os.open(folder / "keys.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise _store_error(folder, exc) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held for one read and one write
        yield folder / KEYS_FILE
    except OSError as exc:
        raise _store_error(folder, exc) from exc
    finally:
        os.close(fd)


def _store_error(folder: Path, exc: OSError) -> StoreError:
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return ReadOnlyStoreError(
            f"Cannot write the keys in {folder}: {exc.strerror}.",
            hint="Check the folder's permissions.",
        )
    return StoreError(f"Cannot write the keys in {folder}: {exc.strerror}.")


def _write(path: Path, keys: _KeyFile) -> None:
    """Replaces the key file whole: a reader sees the old one or the new one."""
    write_atomically(path, _ENCODER.encode(keys) + b"\n")


def _check_label(label: str) -> str:
    label = label.strip()
    if not label:
        raise InvalidInputError(
            "A key's label cannot be empty.", hint="Name what will use it, e.g. `ci`."
        )
    if len(label) > _MAX_LABEL:
        raise InvalidInputError(
            f"A key's label is at most {_MAX_LABEL} characters, not {len(label)}."
        )
    if any(unicodedata.category(c) == "Cc" for c in label):
        raise InvalidInputError(
            f"The label {label!r} holds a control character.",
            hint="Use letters, digits, spaces and punctuation.",
        )
    return label


def _check_pattern(pattern: str) -> str:
    problem = None
    if not pattern:
        problem = "is empty"
    elif len(pattern) > _MAX_PATTERN:
        problem = f"is longer than {_MAX_PATTERN} characters"
    elif any(c in _NOT_IN_BRANCHES or unicodedata.category(c) == "Cc" for c in pattern):
        problem = "holds a character no branch name has"
    elif ".." in pattern or pattern.startswith("/") or pattern.endswith("/"):
        problem = "cannot match a branch name"
    if problem:
        raise InvalidInputError(
            f"Branch pattern {pattern!r} {problem}.", hint=_PATTERN_HINT
        )
    return pattern


def _owning_store(ws: Workspace, *, write: bool) -> bool:
    """Returns whether the store exists; makes the user store when writing.

    Raises:
        NotAStoreError: An explicit or found path holds no store.
    """
    if ws.on_disk and not (ws.path / "git").is_dir():
        ws.store()  # raises NotAStoreError, as every command would
    if write and not ws.on_disk:
        ws.store(write=True)
    return ws.on_disk


def create_key(
    ws: Workspace,
    label: str,
    *,
    read: Sequence[str] = (),
    write: Sequence[str] = (),
    admin: bool = False,
    now: datetime | None = None,
) -> CreatedKey:
    """Makes a key and returns it with its token (shown this once).

    Args:
        ws: The workspace whose store the key opens.
        label: The owner's name for the key, unique among keys not revoked.
        read: Branch patterns it may read.
        write: Branch patterns it may write (and read).
        admin: Whether it may manage keys over HTTP.
        now: Its creation time (default: the workspace's clock).

    Raises:
        InvalidInputError: The label is empty, too long, holds a control
            character or is taken; a pattern is not valid; or the key could
            do nothing (no pattern and not admin). Nothing is written.
        NotAStoreError: There is no store at the workspace's path.
        StoreError: The key file cannot be read or written (a read-only
            store: :class:`~ctx.engine.ReadOnlyStoreError`).
    """
    label = _check_label(label)
    reads = tuple(dict.fromkeys(_check_pattern(p) for p in read))
    writes = tuple(dict.fromkeys(_check_pattern(p) for p in write))
    if not (reads or writes or admin):
        raise InvalidInputError(
            f"Key {label!r} would open nothing.",
            hint="Give it --read PATTERN, --write PATTERN or --admin.",
        )
    created_at = ws.clock() if now is None else now
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    _owning_store(ws, write=True)
    with _locked(ws) as path:
        keys = _read(path)
        ids = {k.key.id for k in keys.keys}
        if label in ids or any(k.label == label for k in _active(keys)):
            raise InvalidInputError(
                f"A key labelled {label!r} already exists.",
                hint=f"Pick another label, or `ctx keys revoke {label}` first.",
            )
        taken = ids | {k.key.label for k in keys.keys}
        key_id = secrets.token_hex(4)
        while key_id in taken:
            key_id = secrets.token_hex(4)
        key = ApiKey(
            id=key_id,
            label=label,
            read=reads,
            write=writes,
            admin=admin,
            created_at=created_at,
        )
        stored = _StoredKey(key=key, sha256=_hash(token))
        _write(path, _KeyFile(keys=[*keys.keys, stored]))
    return CreatedKey(key=key, token=token)


def _active(keys: _KeyFile) -> list[ApiKey]:
    return [k.key for k in keys.keys if k.key.revoked_at is None]


def list_keys(ws: Workspace) -> list[ApiKey]:
    """Returns every key of the store, revoked ones too, oldest first.

    Raises:
        NotAStoreError: There is no store at the workspace's path.
        StoreError: The key file cannot be read.
    """
    if not _owning_store(ws, write=False):
        return []
    return [k.key for k in _read(_keys_path(ws)).keys]


def revoke_key(
    ws: Workspace, key_id_or_label: str, *, now: datetime | None = None
) -> RevokedKey:
    """Revokes a key, named by its id or by its label; its token stops working.

    A label names the key not yet revoked that has it (or, if every key with
    that label is revoked, the newest of them). Revoking a revoked key
    changes nothing.

    Args:
        ws: The workspace whose store holds the key.
        key_id_or_label: The key's id or label.
        now: The revocation time (default: the workspace's clock).

    Raises:
        NotFoundError: No key has that id or label.
        NotAStoreError: There is no store at the workspace's path.
        StoreError: The key file cannot be read or written.
    """
    missing = NotFoundError(
        f"No key has the id or label {key_id_or_label!r}.",
        hint="`ctx keys ls` lists the keys.",
    )
    if not _owning_store(ws, write=False):
        raise missing
    revoked_at = ws.clock() if now is None else now
    with _locked(ws) as path:
        keys = _read(path)
        named = [k for k in keys.keys if k.key.id == key_id_or_label] or sorted(
            (k for k in keys.keys if k.key.label == key_id_or_label),
            key=lambda k: (k.key.revoked_at is None, k.key.created_at),
        )
        if not named:
            raise missing
        target = named[-1]
        if target.key.revoked_at is not None:
            return RevokedKey(key=target.key, changed=False)
        key = msgspec.structs.replace(target.key, revoked_at=revoked_at)
        done = _StoredKey(key=key, sha256=target.sha256)
        _write(path, _KeyFile(keys=[done if k is target else k for k in keys.keys]))
    return RevokedKey(key=key, changed=True)


def authenticate(ws: Workspace, header_value: str | None) -> ApiKey:
    """Returns the key an ``Authorization`` header presents.

    Called once per request: the key file is read again only when it
    changed. Every known hash is compared, in constant time.

    Args:
        ws: The workspace whose store's keys are asked.
        header_value: The header's value, ``Bearer ctx_...`` (None: no header).

    Raises:
        AuthError: The header is missing or not ``Bearer <token>``, or the
            token is malformed, unknown or revoked.
        StoreError: The key file cannot be read (no key is let in).
    """
    if not header_value:
        raise AuthError(
            "No API key was given.",
            hint="Send `Authorization: Bearer <token>`; `ctx keys create` makes one.",
        )
    found = _BEARER_RE.fullmatch(header_value)
    if found is None or _TOKEN_RE.fullmatch(found.group(1)) is None:
        raise AuthError(
            "The Authorization header is not `Bearer ctx_<token>`.",
            hint="Send the token `ctx keys create` printed.",
        )
    digest = _hash(found.group(1))
    match = None
    keys = _read(_keys_path(ws)) if ws.on_disk else _KeyFile()
    for key in keys.keys:
        if hmac.compare_digest(key.sha256, digest):
            match = key
    if match is None or match.key.revoked_at is not None:
        raise AuthError(
            "The API key is unknown or revoked.",
            hint="`ctx keys ls` lists the store's keys.",
        )
    return match.key


def keys_required(ws: Workspace, *, host: str | None = None) -> bool:
    """Returns whether a server of the store must ask every request for a key.

    Keys are required unless the store's config says otherwise (``[serve]
    require_keys = false``), and always when the server listens on ``host``
    and it is not a loopback address (``127.0.0.0/8``, ``::1``,
    ``localhost``): such a server must not start while the store has no key.

    Raises:
        InvalidInputError: The store's config is not valid.
    """
    if host is not None and not is_loopback(host):
        return True
    return ws.config().serve.require_keys


def is_loopback(host: str) -> bool:
    """Returns whether ``host`` is a loopback address or ``localhost``.

    Any other name counts as not loopback: it may resolve anywhere.
    """
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name may resolve anywhere
