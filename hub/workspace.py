"""A workspace: the store a caller works on, found as git finds ``.git``.

Every caller of the hub (the command line, and the MCP server, HTTP API,
hooks and lens built on it) starts from a :class:`Workspace`. It finds the
store, opens it once, and holds what the environment says about who is
working where: ``CTX_BRANCH``, ``CTX_AGENT`` and ``CTX_SESSION``, and the
folder it runs in, whose code branch a store with ``[branches] follow_code``
works on when a call names no branch (:mod:`ctx.hub.code_branches`).

The store is, in order: the folder given (``--store``), ``CTX_DIR``, a
``.ctx`` folder in the working directory or one of its parents, and else the
user's store in the platform data folder, created on the first write.
Reading a user store that does not exist yet sees an empty store.

Light to import (the engine's store and platformdirs load when used): the
command line makes a workspace before it knows what it will do.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ctx.engine import Intent, NotAStoreError
from ctx.hub.locking import ReadWriteLock
from ctx.hub.state import SCRUB_PENDING

if TYPE_CHECKING:  # dulwich loads when a store is opened
    from ctx.engine import Store
    from ctx.hub.config import HubConfig
    from ctx.hub.screen import SecretMode

__all__ = ["Workspace", "local_now"]

STORE_FOLDER = ".ctx"
"""The name of a project store's folder, as ``.git`` is git's."""


def local_now() -> datetime:
    """Returns the current local time, timezone aware (the default clock)."""
    return datetime.now().astimezone()


class Workspace:
    """The store a caller works on, and who is working in it.

    Args:
        path: The store folder (holding ``git/``).
        user_store: Whether it is the user's store (created on first write).
        branch: The branch to work on when a call names none (``None``: the
            store's HEAD).
        agent: Who writes (``None``: the login name).
        session: The working session's id, if any.
        clock: Returns the current time; the default is local time.
        code: Where the caller runs, in the code's work tree if any: a store
            that follows the code's branches works on the one checked out
            there (``None``: it follows nothing).
    """

    def __init__(
        self,
        path: Path,
        *,
        user_store: bool = False,
        branch: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        clock: Callable[[], datetime] = local_now,
        code: Path | None = None,
    ) -> None:
        self.path = path
        self.code = code
        self.user_store = user_store
        self.branch = branch
        self.agent = agent
        self.session = session
        self.clock = clock
        self.allow_secrets = False
        """Whether this caller stores secrets as given (``--allow-secret``),
        whatever the store's ``[secrets] mode``."""
        self.lock = ReadWriteLock()
        """Held around every use of the store by callers on several threads
        (the MCP server and HTTP API run calls on worker threads): ``with
        ws.lock:`` to write, alone; ``with ws.lock.reading():`` to read, side
        by side with other reads (:mod:`ctx.hub.locking`)."""
        self._opening = threading.Lock()  # two readers' first store() open one
        self._store: Store | None = None
        self._wrote = False  # a write was asked for: close() may start packing

    @classmethod
    def find(
        cls,
        store: str | os.PathLike[str] | None = None,
        *,
        cwd: Path | None = None,
        environ: Mapping[str, str] | None = None,
        clock: Callable[[], datetime] = local_now,
    ) -> Workspace:
        """Returns the workspace a command run in ``cwd`` works on.

        Args:
            store: The store folder given explicitly (``--store``); a folder
                holding ``.ctx/`` means that store.
            cwd: Where to start looking (default: the working directory).
            environ: The environment (default: ``os.environ``).
            clock: The workspace's clock.
        """
        env = os.environ if environ is None else environ
        found = cls.locate(store, cwd=cwd, environ=env)
        here = cwd or Path.cwd()
        return cls(
            found[0],
            user_store=found[1],
            branch=env.get("CTX_BRANCH") or None,
            agent=env.get("CTX_AGENT") or None,
            session=env.get("CTX_SESSION") or None,
            clock=clock,
            code=here,
        )

    @staticmethod
    def locate(
        store: str | os.PathLike[str] | None = None,
        *,
        cwd: Path | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> tuple[Path, bool]:
        """Returns the store folder, and whether it is the user's store.

        ``store`` or ``CTX_DIR``, else ``.ctx/`` in ``cwd`` or above, else,
        in a linked worktree, the main work tree's ``.ctx/``, else the
        user's store.
        """
        env = os.environ if environ is None else environ
        explicit = store or env.get("CTX_DIR") or None
        if explicit:
            path = Path(explicit).expanduser()
            if (path / STORE_FOLDER / "git").is_dir():
                path = path / STORE_FOLDER
            return path.absolute(), False
        here = cwd or Path.cwd()
        for folder in (here, *here.parents):
            candidate = folder / STORE_FOLDER
            if (candidate / "git").is_dir():
                return candidate, False
        # A linked worktree (`git worktree add`) is a checkout of the same
        # project: its store is the main work tree's.
        from ctx.engine import main_work_tree

        main = main_work_tree(here)
        if main is not None and (main / STORE_FOLDER / "git").is_dir():
            return main / STORE_FOLDER, False
        return Workspace.user_store_path(), True

    @staticmethod
    def user_store_path() -> Path:
        """Returns the user store's folder (it may not exist yet)."""
        import platformdirs

        return Path(platformdirs.user_data_dir("ctx", appauthor=False))

    @property
    def on_disk(self) -> bool:
        """Returns whether the store exists on disk (a hub can serve it)."""
        return not self.user_store or (self.path / "git").is_dir()

    def store(self, *, write: bool = False) -> Store:
        """Returns the store, opened once; the user store is made on first write.

        Raises:
            NotAStoreError: No store is at an explicit or found path.
        """
        with self._opening:
            return self._opened(write)

    def _opened(self, write: bool) -> Store:
        from ctx.hub.screen import SecretScreen

        screen = SecretScreen(self.secrets_mode)
        self._wrote = self._wrote or write
        # The user store's stand-in serves until the store is on disk: made
        # by this write, or since by another process (a long `ctx mcp` or
        # `ctx serve` would otherwise answer from an empty store for good).
        standing_in = self._store is not None and self._store.path is None
        if (
            self._store is not None
            and not (standing_in and write)
            and not (standing_in and (self.path / "git").is_dir())
        ):
            self._follow(self._store)
            return self._store
        Store = self._store_class()  # noqa: N806 (a class)
        if self._store is not None:
            # A user store read while empty, now written or made: open it.
            self._store.close()
            self._store = Store.init(
                self.path, clock=self.clock, exist_ok=True, screen=screen
            )
        elif self.user_store and not (self.path / "git").is_dir():
            if write:
                self._store = Store.init(
                    self.path, clock=self.clock, exist_ok=True, screen=screen
                )
            else:
                self._store = Store.memory(clock=self.clock, screen=screen)
        elif not self.path.exists():
            raise NotAStoreError(
                f"No store at {self.path}.",
                hint="Run `ctx init` there, or fix --store.",
            )
        else:
            self._store = Store.open(self.path, clock=self.clock, screen=screen)
            if (self.path / SCRUB_PENDING).exists():
                # A redaction was killed: the engine finished its part
                # in Store.open; the indexes and private files follow.
                from ctx.hub.redaction import finish_scrub

                finish_scrub(self._store)
        self._follow(self._store)
        return self._store

    def _store_class(self) -> type[Store]:
        """Returns the class to open the store as: following the code, or not.

        Either makes the branches a call names by their first write
        (:mod:`ctx.hub.lazy_branches`).
        """
        from ctx.engine import InvalidInputError
        from ctx.hub.lazy_branches import LazyBranches

        if self.code is None or not self.on_disk:
            return LazyBranches
        try:
            follows = self.config().branches.follow_code
        except InvalidInputError:
            # Said by every command that reads the settings (writes, recalls);
            # a read that needs none works on the store's HEAD, as before.
            follows = False
        if not follows:
            return LazyBranches
        from ctx.hub.code_branches import FollowingStore

        return FollowingStore

    def followed_branch(self) -> str | None:
        """Returns the code's memory branch when the store follows the code.

        That is the branch a call naming none works on here
        (:meth:`Store.head_branch` of a store that follows the code's
        branches); ``None`` for a store that follows nothing, whose default
        is its HEAD wherever it is asked. A hub runs in a folder of its own:
        a caller in another work tree sends it this branch, or the hub would
        answer for the code branch checked out where it was started.
        """
        if self._store_class().__name__ != "FollowingStore":
            return None
        return self.store().head_branch()

    def _follow(self, store: Store) -> None:
        if type(store).__name__ == "FollowingStore":  # no import when not following
            from ctx.hub.code_branches import FollowingStore

            assert isinstance(store, FollowingStore)
            store.code = self.code
            # Once a caller writes, a missing memory branch is created rather
            # than read through: a write never lands on the ancestor's.
            store.writing = self._wrote

    def secrets_mode(self) -> SecretMode:
        """Returns what a write holding a secret does here.

        That is the store's ``[secrets] mode``, or ``allow`` with
        :attr:`allow_secrets`.

        Raises:
            InvalidInputError: The store's config.toml is not valid.
        """
        if self.allow_secrets:
            return "allow"
        return self.config().secrets.mode

    def config(self) -> HubConfig:
        """Returns the store's ``config.toml`` settings (defaults if none).

        Raises:
            InvalidInputError: The file is not valid.
        """
        from ctx.hub.config import load_config

        return load_config(self.path if self.on_disk else None)

    def own_branch(self, agent: str | None) -> str | None:
        """Returns ``agent/<name>`` if agents write on branches of their own.

        That is with ``[agents] branch_per_agent`` or ``review_writes`` set
        (the latter keeps their writes there until reviewed and merged);
        ``agent`` is the one the writes are signed by (a door resolves it as
        it signs them); ``None`` without one. In a store that follows the
        code, an agent has one per code branch, ``agent/<name>@<branch>``,
        made from that branch's memory: one for every code branch carried
        one branch's unmerged memory to the others, and its review into main.
        """
        who = agent
        agents = self.config().agents
        if not who or not (agents.branch_per_agent or agents.review_writes):
            return None
        code = self._code_memory_branch()
        return f"agent/{who}" if code is None else f"agent/{who}@{code}"

    def _code_memory_branch(self) -> str | None:
        """Returns the code's current branch's memory branch name, if following.

        Made or not (:func:`ctx.engine.code_memory_branch`): a reader and a
        writer name an agent's branch for it alike.
        """
        if self._store_class().__name__ != "FollowingStore":
            return None
        from ctx.engine import Store, code_memory_branch

        store = self.store()
        assert self.code is not None
        return code_memory_branch(self.code, Store.head_branch(store))

    def reviewed_view(
        self, branch: str | None, overlay: Sequence[str] = (), *, only: bool = False
    ) -> tuple[str | None, tuple[str, ...]]:
        """Returns the branch and overlay a recall reads.

        With ``only`` (``--reviewed-only``) or ``[recall] reviewed_only``:
        the reviewed branch alone (``[recall] reviewed_branch``, ``main``),
        where reviewed memory is merged; the agents' own branches
        (``[agents] review_writes``) and any overlay are not read.
        Otherwise ``branch`` and ``overlay`` as given.
        """
        recall = self.config().recall
        if not (only or recall.reviewed_only):
            return branch, tuple(overlay)
        return recall.reviewed_branch, ()

    def intent(
        self,
        intent: str,
        *,
        agent: str | None = None,
        confidence: float | None = None,
        reason: str | None = None,
        session: str | None = None,
    ) -> Intent:
        """Returns the intent of a write made here.

        The agent is, in order: ``agent``, the workspace's (``CTX_AGENT``),
        the login name, ``human``; the session likewise falls back to the
        workspace's.
        """
        who = agent or self.agent
        if not who:
            import getpass  # only when no agent is named (it loads termios)

            try:
                who = getpass.getuser()
            except (KeyError, OSError):
                who = "human"
        return Intent(
            agent=who,
            intent=intent,
            confidence=confidence,
            reason=reason,
            session=session or self.session,
        )

    def close(self) -> None:
        """Closes the store's open files, if it was opened.

        A workspace that wrote starts packing the store's loose objects in
        the background first, if they are many (:mod:`ctx.hub.upkeep`).
        """
        if self._store is not None:
            if self._wrote:
                from ctx.hub.upkeep import pack_in_background

                pack_in_background(self._store)
            self._store.close()
            self._store = None
