"""Fetch, push and pull: memory that travels through git remotes.

Every transfer goes through dulwich's clients (local paths and ``file://``,
``git://``, ``ssh://`` and scp-like addresses, smart ``http(s)://``), and
every one writes objects first and refs last:

- fetch: every object the moved branches reach and the store lacks is
  checked first (:mod:`ctx.engine._incoming`: what ``git fsck`` refuses, and
  what ctx cannot read), in the other repository or in a quarantine
  (:mod:`ctx.engine._fetching`), and kept only if nothing is wrong; only
  then, under the store's lock, do ``refs/remotes/NAME/*`` move, all in one
  write of ``packed-refs``. A fetch refused or killed midway leaves the refs
  as they were, and no object of it; the next one starts again.
- push: the remote's branches move only once it has every object (git's
  receive-pack, and dulwich's, update refs last); a push that is not a fast
  forward is refused before anything is sent, unless forced.
- pull: a fetch, then :func:`ctx.engine.merge.merge` with the fetched branch
  as the source: tags and links union, clashes are stored as conflicts.
- redactions (:mod:`ctx.engine.redaction`): every fetch, push and clone
  first joins the remote's record (``refs/ctx/redactions``) to the store's;
  a fetch refuses a commit or blob a redaction removed, a push refuses to
  send one, and a push onto a branch that still holds the old history asks
  for ``force_with_lease``. A pull applies the record to what this store
  still holds of the old history. ``ignore_redactions`` lifts the refusals.
- clone (:mod:`ctx.engine.cloning`): a new store from a remote, fetched
  as here.

A remote whose branches hold neither memories nor anything else ctx writes
is not a ctx store and is refused before any ref moves. A remote with a
namespace (the code's own remote, :mod:`ctx.engine.code_remotes`) is read
and written only under it: ``refs/heads/ctx/*``; the code's branches are
neither fetched nor checked nor moved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from contextlib import closing

import msgspec
from dulwich.client import (
    GitClient,
    LocalGitClient,
    SendPackResult,
    SubprocessGitClient,
)
from dulwich.errors import (
    NotGitRepository,
    PackedRefsException,
)
from dulwich.graph import can_fast_forward
from dulwich.object_store import DiskObjectStore
from dulwich.objects import ObjectID
from dulwich.pack import UnpackedObject
from dulwich.refs import Ref
from dulwich.repo import Repo
from dulwich.worktree import list_worktrees

from ctx.engine._fetch_plan import (
    HEADS,
    check_holds_memory,
    moving_branches,
    remote_branches,
    remote_head,
)
from ctx.engine._fetching import (
    Fetched,
    UnreadableRefsError,
    fetch_local,
    fetch_remote,
    receive_objects,
)
from ctx.engine._incoming import RECORD_TIP, RedactedError, RefusedError
from ctx.engine._pack_copy import in_runs, pack_records
from ctx.engine._reaching import NO_ACCESS, Access, reach
from ctx.engine._receive_rules import has_receive_rules
from ctx.engine._redaction_record import (
    REDACTIONS_REF,
    list_redactions,
    redacted_objects,
    replaced_records,
)
from ctx.engine._redaction_sync import drop_removed, record_behind, sync_redactions
from ctx.engine._sending import objects_to_send
from ctx.engine.branches import target_branch
from ctx.engine.errors import (
    ConflictError,
    RefNotFoundError,
    RemoteError,
)
from ctx.engine.ids import CommitId
from ctx.engine.merge import MergeResult, merge
from ctx.engine.model import Intent
from ctx.engine.redaction import RedactResult, apply_redactions
from ctx.engine.remotes import (
    display_url,
    remote_namespace,
    remote_url,
    tracking_branches,
    tracking_ref,
    write_refs,
)
from ctx.engine.store import Store, check_branch_name

__all__ = [
    "FetchResult",
    "PullResult",
    "PushResult",
    "RefUpdate",
    "fetch",
    "fetch_objects",
    "pull",
    "push",
    "sync_record",
]


class RefUpdate(msgspec.Struct, frozen=True, kw_only=True):
    """One branch a transfer moved.

    Attributes:
        branch: The branch (on the remote for a push, fetched for a fetch).
        old: Where it was (``None``: it is new).
        new: Where it is now (``None``: it was removed).
        forced: The move was not a fast forward.
    """

    branch: str
    old: CommitId | None
    new: CommitId | None
    forced: bool = False


class FetchResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a fetch brought.

    Attributes:
        remote: The remote's name.
        url: Its address.
        head: The remote's default branch, when it says.
        branches: Every branch the remote has, with its tip.
        updated: The fetched branches that moved (``refs/remotes/NAME/*``).
    """

    remote: str
    url: str
    head: str | None
    branches: dict[str, CommitId]
    updated: tuple[RefUpdate, ...]


class PushResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a push sent.

    Attributes:
        remote: The remote's name.
        url: Its address.
        updated: The remote's branches that moved.
        up_to_date: Branches the remote already had at our tip.
    """

    remote: str
    url: str
    updated: tuple[RefUpdate, ...]
    up_to_date: tuple[str, ...]


class PullResult(msgspec.Struct, frozen=True, kw_only=True):
    """A fetch and the merge of one fetched branch into a local one.

    Attributes:
        fetch: What the fetch brought.
        merge: The merge.
        redactions: The redactions the fetch brought that were applied to
            this store's history before the merge.
    """

    fetch: FetchResult
    merge: MergeResult
    redactions: tuple[RedactResult, ...] = ()


# -- fetch -----------------------------------------------------------------------


def fetch(
    store: Store,
    remote: str = "origin",
    *,
    access: Access = NO_ACCESS,
    ignore_redactions: bool = False,
) -> FetchResult:
    """Fetches every branch of ``remote`` into ``refs/remotes/REMOTE/``.

    Branches gone from the remote are removed from there too. What the
    moved branches reach is checked before any ref moves
    (:mod:`ctx.engine._incoming`); the fetched branches move together, in
    one write of ``packed-refs``. The remote's redactions join the store's
    first, and what they removed is refused unless ``ignore_redactions``.

    Raises:
        RemoteNotFoundError: no such remote.
        RemoteError: it cannot be reached, refuses us, holds what a store may
            not hold or a redaction removed, or is not a ctx store.
    """
    url = remote_url(store, remote)
    redacted = {} if ignore_redactions else redacted_objects(store)
    heads, head, record = fetch_objects(
        store,
        url,
        access,
        tracking_branches(store, remote),
        remote_namespace(store, remote),
        redacted,
    )
    sync_record(
        store, url, access, record, [ObjectID(t.encode()) for t in heads.values()]
    )
    with store.locked():
        known = tracking_branches(store, remote)
        moves = {
            branch: heads.get(branch)
            for branch in sorted(set(known) | set(heads))
            if known.get(branch) != heads.get(branch)
        }
        _move_tracking(store, remote, moves)
    updated = []
    for branch, new in moves.items():
        old = known.get(branch)
        forced = old is not None and new is not None and not _ff(store, old, new)
        updated.append(RefUpdate(branch=branch, old=old, new=new, forced=forced))
    return FetchResult(
        remote=remote,
        url=display_url(url),
        head=head,
        branches=heads,
        updated=tuple(updated),
    )


def sync_record(
    store: Store,
    url: str,
    access: Access,
    record: ObjectID | None,
    fetched: Sequence[ObjectID] = (),
) -> None:
    """Joins the remote's redaction record (at ``record``) to the store's.

    The record's objects are fetched first if the store lacks them: one
    more connection, made only when the remote's record is new here. They
    are checked and bounded as a branch's are (:func:`_fetch_checked`). A
    record the store's replaced is not fetched: it is behind, and it holds
    versions a later redaction removed. One that is behind in part (another
    clone's, which knew of fewer redactions) can hold them too: after the
    join, what the fetch brought that a redaction removed is deleted, unless
    a ref or the ``fetched`` branch tips (their refs not yet moved) reach it.

    Raises:
        RemoteError: what the record reaches is not what a store may hold.
    """
    if record is None or record in replaced_records(store):
        return
    if record in store.repo.object_store:
        sync_redactions(store, record, fetched)
        return

    def moving(refs: Mapping[Ref, ObjectID]) -> dict[str, ObjectID]:
        sha = refs.get(REDACTIONS_REF)
        if sha is None or sha in replaced_records(store):
            return {}
        return {RECORD_TIP: sha}

    try:
        refs, _, checked = _fetch_checked(store, url, access, moving, None)
    except (UnreadableRefsError, PackedRefsException):
        return  # the fetch before it read them; they changed since
    record = refs.get(REDACTIONS_REF) or record
    sync_redactions(store, record, fetched)
    drop_removed(store, checked.seen, fetched, record)


def _fetch_checked(
    store: Store,
    url: str,
    access: Access,
    moving: Callable[[Mapping[Ref, ObjectID]], dict[str, ObjectID]],
    redacted: Mapping[ObjectID, str] | None,
) -> Fetched:
    """Fetches what ``moving`` names into the store, checked and bounded.

    Through the quarantine and the received pack's bounds
    (:func:`~ctx.engine._fetching.fetch_remote`), or from a repository on
    this machine read object by object
    (:func:`~ctx.engine._fetching.fetch_local`); what ``redacted`` names is
    refused.

    Raises:
        RemoteError: what it would bring is refused.
        UnreadableRefsError: the repository's refs cannot be read.
    """

    def fetch_from(client: GitClient, path: str) -> Fetched:
        if isinstance(client, LocalGitClient):
            return fetch_local(store, path, moving, redacted)
        return fetch_remote(store, client, path, moving, redacted)

    shown = display_url(url)
    try:
        return reach(url, access, fetch_from)
    except RedactedError as exc:
        raise RemoteError(
            f"{shown} cannot be fetched: {exc}.",
            hint="Nothing was changed. Push the redacted history there with "
            "`ctx push --force-with-lease`, or add --ignore-redactions.",
        ) from None
    except RefusedError as exc:
        raise RemoteError(
            f"{shown} cannot be fetched: {exc}.",
            hint="Nothing was changed; `git fsck` in that repository says more.",
        ) from None


def fetch_objects(
    store: Store,
    url: str,
    access: Access,
    known: Mapping[str, CommitId],
    namespace: str,
    redacted: Mapping[ObjectID, str],
) -> tuple[dict[str, CommitId], str | None, ObjectID | None]:
    """Brings the objects of the remote's branches, checked, into the store.

    Only the branches whose tips differ from ``known`` (the tracking refs as
    they are) are walked and checked, and only those under ``namespace``
    (``refs/heads/NAMESPACE*``, named without it) are branches at all.
    What ``redacted`` names is refused.

    Returns:
        Every branch of the remote that ctx can name, with its tip, the
        remote's default branch (when it says, and that branch is there),
        and its redaction record's commit, if it has one.
    """

    def moving(refs: Mapping[Ref, ObjectID]) -> dict[str, ObjectID]:
        return moving_branches(refs, namespace, known)

    shown = display_url(url)
    try:
        refs, symrefs, checked = _fetch_checked(store, url, access, moving, redacted)
    except UnreadableRefsError as exc:
        raise RemoteError(
            f"{shown} cannot be fetched: its refs cannot be read ({exc}).",
            hint="Nothing was changed; `git fsck` in that repository says more.",
        ) from None
    check_holds_memory(shown, namespace, checked.tops, refs)
    heads = {
        name: CommitId(sha.decode())
        for name, sha in remote_branches(refs, namespace).items()
    }
    record = refs.get(REDACTIONS_REF)
    return heads, remote_head(symrefs, namespace, heads), record


def _move_tracking(
    store: Store, remote: str, moves: Mapping[str, CommitId | None]
) -> None:
    """Moves ``remote``'s fetched branches (``None``: removes one) at once.

    One write of ``packed-refs`` for all of them, whatever their number: a
    ref file and a reflog each cost a clone of 20,000 branches minutes.
    Called under the store's lock, after reading the refs under it.
    """
    write_refs(
        store,
        {
            tracking_ref(remote, branch): None
            if tip is None
            else ObjectID(tip.encode())
            for branch, tip in moves.items()
        },
    )


def _ff(store: Store, old: CommitId, new: CommitId) -> bool:
    """Returns whether ``new`` descends from ``old`` (both present here)."""
    old_id, new_id = ObjectID(old.encode()), ObjectID(new.encode())
    if old_id not in store.repo.object_store:
        return False
    return can_fast_forward(store.repo, old_id, new_id)


# -- push ------------------------------------------------------------------------


def push(
    store: Store,
    remote: str = "origin",
    branches: Sequence[str] = (),
    *,
    all_branches: bool = False,
    force: bool = False,
    force_with_lease: bool = False,
    ignore_redactions: bool = False,
    access: Access = NO_ACCESS,
) -> PushResult:
    """Pushes ``branches`` (default: the current one) to the same names on ``remote``.

    A branch the remote has moved past ours (not a fast forward) is refused,
    and then nothing is pushed at all, unless ``force``, or
    ``force_with_lease`` and the remote's branch is where it was last
    fetched (or a commit that redactions since rewrote into that). A push that
    would send what a redaction removed is refused unless
    ``ignore_redactions``; the store's redaction record goes with every push.
    With ``force_with_lease``, a branch only fetched here (no branch of that
    name) is pushed as fetched: after a redaction rewrote it, that replaces
    the remote's old history.

    Raises:
        RemoteNotFoundError: no such remote.
        RefNotFoundError: a branch does not exist here.
        ConflictError: a push that is not a fast forward, without ``force``
            (or with a lease the remote's branch broke), or one that would
            send what a redaction removed.
        RemoteError: the remote cannot be reached or refused the update.
    """
    url = remote_url(store, remote)
    prefix = HEADS + remote_namespace(store, remote).encode()
    names = store.branches() if all_branches else list(branches)
    known = tracking_branches(store, remote)
    local = set(store.branches())
    tips = {}
    for name in names or [store.head_branch()]:
        if force_with_lease and name not in local and name in known:
            # Only fetched here, and rewritten by a redaction since: its copy
            # replaces the remote's old history.
            tips[name] = known[name]
        else:
            tips[name] = store.branch_tip(name)
    updated: list[RefUpdate] = []
    same: list[str] = []
    behind: list[str] = []
    stale: list[str] = []
    lease_lost: list[str] = []
    leaks: list[str] = []
    unseen: list[ObjectID] = []
    checked_out: list[Ref] = []  # a work tree's branch there (set by send)
    in_use: list[str] = []
    blocked: list[tuple[str, str]] = []  # (ours, theirs): a ref in our new one's way

    def update_refs(refs: dict[Ref, ObjectID]) -> dict[Ref, ObjectID]:
        for found in (
            updated,
            same,
            behind,
            stale,
            lease_lost,
            leaks,
            unseen,
            in_use,
            blocked,
        ):
            found.clear()  # a retry with credentials calls this again
        theirs_record = refs.get(REDACTIONS_REF)
        if (
            theirs_record is not None
            and theirs_record not in store.repo.object_store
            and theirs_record not in replaced_records(store)
        ):
            unseen.append(theirs_record)  # fetched, then the push tried again
            return {}
        sync_redactions(store, theirs_record)
        records = list_redactions(store)
        rewritten = {old for r in records for old in r.commits}
        was = {new: old for r in records for old, new in r.commits.items()}
        redacted = {} if ignore_redactions else redacted_objects(store)
        record_tip = store.repo.refs.get_peeled(REDACTIONS_REF)
        new: dict[Ref, ObjectID] = {}
        for branch, tip in tips.items():
            ref = Ref(prefix + branch.encode())
            theirs = refs.get(ref)
            old = CommitId(theirs.decode()) if theirs else None
            if old == tip:
                same.append(branch)
                continue
            forced = old is not None and not _ff(store, old, tip)
            if forced and force_with_lease:
                if old not in _pre_images(known.get(branch), was):
                    lease_lost.append(branch)
            elif forced and not force:
                (stale if old in rewritten else behind).append(branch)
            if ref in checked_out:
                in_use.append(branch)
            if old is None:
                blocked.extend(
                    (ref.decode(), other.decode())
                    for other in refs
                    if other.startswith(ref + b"/") or ref.startswith(other + b"/")
                )
            new[ref] = ObjectID(tip.encode())
            updated.append(RefUpdate(branch=branch, old=old, new=tip, forced=forced))
        if redacted and new:
            sent = objects_to_send(store.repo.object_store, refs.values(), new.values())
            leaks.extend(
                f"{kind} {sha.decode()[:10]}, which {redacted[sha]} removed"
                for sha, kind in sent.items()
                if sha in redacted
            )
        if record_tip is not None and record_behind(store, refs.get(REDACTIONS_REF)):
            new[REDACTIONS_REF] = record_tip
        refused = behind or stale or lease_lost or leaks or in_use or blocked
        return {} if refused else new

    def send(client: GitClient, path: str) -> SendPackResult:
        if isinstance(client, LocalGitClient) and has_receive_rules(path):
            # Its hooks and receive rules hold: git's receive-pack runs them.
            with closing(SubprocessGitClient()) as git:
                return send(git, path)
        objects = store.repo.object_store

        def pack_data(
            have: AbstractSet[ObjectID],
            want: AbstractSet[ObjectID],
            *,
            ofs_delta: bool = False,
            progress: Callable[[bytes], None] | None = None,
        ) -> tuple[int, Iterator[UnpackedObject]]:
            ids = list(objects_to_send(objects, have, want))
            if not isinstance(client, LocalGitClient):
                return in_runs(*pack_records(objects, ids))
            # A repository on this machine: the packs go straight into it,
            # copied as they are or indexed from what writing them told
            # (dulwich's would inflate and hash every object again); the
            # client then has nothing to send and moves the refs, as after
            # any pack it received.
            with closing(Repo(path)) as target:
                assert isinstance(target.object_store, DiskObjectStore)
                receive_objects(target.object_store, objects, ids)
            return 0, iter(())

        checked_out[:] = (
            _checked_out(path) if isinstance(client, LocalGitClient) else []
        )
        return client.send_pack(
            path.encode(), update_refs, generate_pack_data=pack_data
        )

    for _attempt in range(2):
        result = reach(url, access, send)
        if not unseen:
            break
        sync_record(store, url, access, unseen[0])
    if unseen:
        raise RemoteError(
            f"{display_url(url)}'s record of redactions cannot be fetched; "
            "nothing was pushed."
        )
    _refuse_push(remote, leaks, stale, lease_lost)
    if in_use:
        raise RemoteError(
            f"{display_url(url)} has {in_use[0]!r} checked out in a work tree; "
            "nothing was pushed.",
            hint="Push to a bare repository (`git init --bare`), as git "
            "refuses to move a branch checked out there.",
        )
    if blocked:
        ours, theirs = (name.removeprefix("refs/heads/") for name in blocked[0])
        raise RemoteError(
            f"{display_url(url)} has {theirs!r}, so {ours!r} cannot be made "
            "there: as in git, a branch name cannot also be a folder of branch "
            "names; nothing was pushed.",
            hint="Rename or delete that branch there"
            + (
                ", or keep the memory in a repository of its own (`ctx remote "
                "add NAME URL`)."
                if prefix != HEADS
                else "."
            ),
        )
    if behind:
        listed = ", ".join(behind)
        first = behind[0]
        into = "" if first == store.head_branch() else f" --into {first}"
        raise ConflictError(
            f"{remote} has work that {listed} does not have; nothing was pushed.",
            hint=f"`ctx pull {remote} {first}{into}` merges it first; "
            f"`ctx push --force {remote} {first}` overwrites it.",
        )
    failed = {
        ref.decode("utf-8", "replace"): error
        for ref, error in (result.ref_status or {}).items()
        if error is not None
    }
    # A remote's receive-pack may take some branches and refuse others (an
    # update hook): those it took are tracked as pushed, and said.
    taken = [u for u in updated if (prefix + u.branch.encode()).decode() not in failed]
    with store.locked():
        known = tracking_branches(store, remote)
        _move_tracking(
            store,
            remote,
            {u.branch: u.new for u in taken if known.get(u.branch) != u.new},
        )
    if failed:
        ref, error = sorted(failed.items())[0]
        went = ", ".join(u.branch for u in taken)
        raise RemoteError(
            f"{display_url(url)} refused {ref}: {error}"
            + (f"; it took {went}." if went else "; nothing was pushed.")
        )
    return PushResult(
        remote=remote,
        url=display_url(url),
        updated=tuple(updated),
        up_to_date=tuple(same),
    )


def _checked_out(path: str) -> list[Ref]:
    """Returns the branches a repository on this machine has checked out.

    Git refuses to move a branch checked out in a work tree
    (``receive.denyCurrentBranch``, and any linked worktree's): its files
    would no longer match it. The repository is read from its common git
    folder, whatever ``path`` names (a checkout, its ``.git``, a linked
    worktree); its own HEAD counts unless ``core.bare`` says it has no work
    tree (a ctx store's repository says so).
    """
    try:
        with closing(Repo(path)) as named, closing(Repo(named.commondir())) as target:
            bare = target.get_config().get_boolean(b"core", b"bare", target.bare)
            trees = list_worktrees(target)
    except (NotGitRepository, OSError, KeyError):  # KeyError: an unborn HEAD
        return []  # the push says what is wrong with it
    return [
        tree.branch
        for at, tree in enumerate(trees)
        if tree.branch is not None and (at or not bare)  # the first is the main
    ]


def _pre_images(leased: CommitId | None, was: Mapping[str, str]) -> set[str | None]:
    """Returns the lease and each commit redactions rewrote into it, in turn.

    The tracking branch a push leases on is rewritten by every redaction;
    the remote's branch, pushed before them, is its pre-image one rewrite
    back per redaction since.
    """
    found: set[str | None] = {leased}
    commit = was.get(leased or "")
    while commit is not None and commit not in found:
        found.add(commit)
        commit = was.get(commit)
    return found


def _refuse_push(
    remote: str, leaks: Sequence[str], stale: Sequence[str], lease_lost: Sequence[str]
) -> None:
    """Raises for a push refused because of a redaction or a broken lease."""
    if leaks:
        raise ConflictError(
            f"The push would send a {leaks[0]}; nothing was pushed.",
            hint=f"`ctx pull {remote}` applies the redaction here first; "
            "--ignore-redactions pushes it anyway.",
        )
    if stale:
        listed = ", ".join(stale)
        raise ConflictError(
            f"{remote} still holds the history a redaction removed, on "
            f"{listed}; nothing was pushed.",
            hint=f"`ctx push {remote} --force-with-lease {' '.join(stale)}` "
            "replaces it there.",
        )
    if lease_lost:
        listed = ", ".join(lease_lost)
        raise ConflictError(
            f"{remote} moved {listed} since it was last fetched; nothing was pushed.",
            hint=f"`ctx fetch {remote}` and look first; --force overwrites it.",
        )


# -- pull ------------------------------------------------------------------------


def pull(
    store: Store,
    intent: Intent,
    remote: str = "origin",
    branch: str | None = None,
    *,
    into: str | None = None,
    prefer: str | None = None,
    access: Access = NO_ACCESS,
    ignore_redactions: bool = False,
) -> PullResult:
    """Fetches ``remote``, then merges its ``branch`` into branch ``into``.

    ``branch`` defaults to the name of ``into``, which defaults to the
    current branch. The merge is ctx's own (:func:`~ctx.engine.merge.merge`):
    clashes end as conflicts in the result, never as an error. Redactions
    the fetch brought are applied to this store's history first (unless
    ``ignore_redactions``).

    Raises:
        RemoteNotFoundError: no such remote.
        RefNotFoundError: the remote has no such branch.
        RemoteError: as :func:`fetch`.
    """
    target = target_branch(store, into)
    source = check_branch_name(branch or target)
    fetched = fetch(store, remote, access=access, ignore_redactions=ignore_redactions)
    applied = () if ignore_redactions else tuple(apply_redactions(store))
    if source not in fetched.branches:
        have = ", ".join(sorted(fetched.branches)) or "none"
        raise RefNotFoundError(
            f"Remote {remote!r} has no branch {source!r} (it has: {have}).",
            hint=f"`ctx push {remote} {source}` creates it there."
            if source in store.branches()
            else f"Name one of its branches: `ctx pull {remote} BRANCH`.",
        )
    merged = merge(store, f"{remote}/{source}", intent, into=target, prefer=prefer)
    return PullResult(fetch=fetched, merge=merged, redactions=applied)
