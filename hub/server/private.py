"""The user's private folder for the hub: its socket, log and start lock.

A hub is trusted with a user's questions and believed in its answers, so
nobody else may stand in for it. A user runs one hub for every store
(:mod:`.listener`); its socket ``hub.sock``, its log ``hub.log`` and the
lock an autostart takes, ``hub.start``, all live in one folder that only
the user can enter:

- ``$XDG_RUNTIME_DIR/ctx/`` where ``XDG_RUNTIME_DIR`` names a real folder
  (an absolute path, not a symlink) that belongs to the user and that nobody
  else can enter (systemd makes one per login, mode 0700);
- otherwise ``<tmp>/ctx-<uid>/``.

The folder is created here with mode 0700, and refused with a
:class:`HubFolderError` unless :func:`os.lstat` (which never follows a
symlink) finds a real folder owned by this user with mode 0700. In a shared
``/tmp`` another user can create ``ctx-<uid>`` first, or a symlink by that
name; such a folder is never used (and never repaired: it is not ours).
Inside it, logs are opened with ``O_NOFOLLOW`` and never truncated.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ctx.engine import CtxError

__all__ = ["HubFolderError", "hub_file", "open_log", "private_folder", "socket_path"]

_FOLDER_MODE = 0o700


class HubFolderError(CtxError):
    """The folder for the hub's socket and log is not private to this user.

    Recall and search then answer in their own process; no hub is asked,
    started or served.
    """


def _problem(path: Path, *, exact_mode: bool) -> str | None:
    """Says why ``path`` is not a private folder of this user (None if it is)."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "is a symlink"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    if st.st_uid != os.getuid():
        return f"belongs to another user (uid {st.st_uid})"
    mode = stat.S_IMODE(st.st_mode)
    if (mode != _FOLDER_MODE) if exact_mode else (mode & 0o077):
        return f"has mode {mode:04o}, not 0700"
    return None


def _base() -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime) and _problem(Path(runtime), exact_mode=False) is None:
        return Path(runtime) / "ctx"
    return Path(tempfile.gettempdir()) / f"ctx-{os.getuid()}"


def private_folder() -> Path:
    """Returns the user's private folder for hubs, creating it if missing.

    Raises:
        HubFolderError: The folder exists but is a symlink, not a folder,
            another user's, or open to others (mode other than 0700).
    """
    folder = _base()
    try:
        os.mkdir(folder, _FOLDER_MODE)
    except FileExistsError:
        pass  # checked below, as found: never repaired
    except OSError as exc:
        raise HubFolderError(
            f"Cannot create the hub folder {folder} ({exc.strerror}).",
            hint="Set XDG_RUNTIME_DIR to a folder only you can enter.",
        ) from None
    else:
        os.chmod(folder, _FOLDER_MODE)  # a umask may have taken bits away
    problem = _problem(folder, exact_mode=True)
    if problem is not None:
        raise HubFolderError(
            f"The hub folder {folder} {problem}; it is not used.",
            hint="Another user may have made it to stand in for your hub: "
            "remove it, or set XDG_RUNTIME_DIR to a folder only you can enter.",
        )
    return folder


def hub_file(suffix: str) -> Path:
    """Returns the hub's file ``hub<suffix>`` in the private folder.

    Raises:
        HubFolderError: The private folder is not private.
    """
    return private_folder() / f"hub{suffix}"


def socket_path() -> Path:
    """Returns where the user's hub listens.

    One socket serves every store: each request names its store.

    Raises:
        HubFolderError: The private folder is not private.
    """
    return hub_file(".sock")


def open_log(path: Path) -> int:
    """Opens a hub's log for appending; returns the file descriptor.

    Never follows a symlink (``O_NOFOLLOW``) and never truncates: a hub that
    loses the race for its socket must not wipe the log of the one that won.

    Raises:
        OSError: The log cannot be opened (``ELOOP`` for a symlink).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(path, flags, 0o600)
