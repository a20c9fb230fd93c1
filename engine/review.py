"""What a branch learned since it split from another: ``ctx review``.

An agent that works on ``agent/<name>`` (``[agents] branch_per_agent``)
leaves its writes there; a review shows them before a merge: the
memory-level diff ``base...branch`` (from the merge base, leaving out what
the base did meanwhile) and the branch's commits that the base lacks.
:func:`changed_by` names the agents behind each change of a diff, and
:func:`link_ends` the memories its link changes join, for a review summary
a pull request can carry (``ctx diff A...B --format markdown``).
"""

from __future__ import annotations

from ctx.engine.branches import CREATED_FROM, resolve_revision
from ctx.engine.diff import Diff, diff_range
from ctx.engine.live import live_catalog
from ctx.engine.log import LogEntry, log
from ctx.engine.model import Outcome
from ctx.engine.reflogs import reflog
from ctx.engine.store import Store

__all__ = ["DiffReport", "Review", "changed_by", "diff_report", "link_ends", "review"]


class Review(Outcome, frozen=True, kw_only=True):
    """What ``branch`` has that ``base`` lacks.

    Attributes:
        branch: The branch reviewed.
        base: The branch it is compared with.
        diff: The memory-level diff from their merge base to ``branch``.
        log: The branch's commits that ``base`` lacks, newest first.
        behind: How many commits ``base`` made since the merge base.
        fast_forward: Whether merging it would only move ``base`` forward.
    """

    branch: str
    base: str
    diff: Diff
    log: tuple[LogEntry, ...]
    behind: int
    fast_forward: bool


def review(store: Store, branch: str, base: str | None = None) -> Review:
    """Returns what ``branch`` learned since it split from ``base`` (HEAD's branch).

    An agent's branch for a code branch (``agent/NAME@BRANCH``, where the
    store follows the code) is reviewed against that branch by default.

    Raises:
        RefNotFoundError: a branch does not exist.
        CommitNotFoundError: they share no history.
    """
    if base is None and branch.startswith("agent/") and "@" in branch:
        base = _made_for(store, branch)
    base = base or store.head_branch()
    ours = resolve_revision(store, branch)
    theirs = resolve_revision(store, base)
    in_base = {r.commit for r in store.history.records(theirs)}
    in_branch = {r.commit for r in store.history.records(ours)}
    entries = [e for e in log(store, rev=ours) if e.commit.id not in in_base]
    return Review(
        branch=branch,
        base=base,
        diff=diff_range(store, f"{base}...{branch}"),
        log=tuple(entries),
        behind=len(in_base - in_branch),
        fast_forward=theirs in in_branch,
    )


def _made_for(store: Store, branch: str) -> str | None:
    """Returns the branch an agent's branch for a code branch is reviewed against.

    The code branch's memory (what follows ``@``), or, where it has none yet,
    the branch it was made from (its first log line, :data:`CREATED_FROM`).
    """
    parts, names = branch.split("@"), store.branches()
    after = ("@".join(parts[n:]) for n in range(1, len(parts)))
    found = next((name for name in after if name in names), None)
    if found is not None:
        return found
    first = reflog(store, branch)[:1]
    made = first[0].message if first else ""
    source = made.removeprefix(CREATED_FROM) if made.startswith(CREATED_FROM) else ""
    return source if source in names else None


class DiffReport(Diff, frozen=True, kw_only=True):
    """A diff, and with ``details`` what a review of it names.

    Attributes:
        agents: Per memory changed, the agents whose commits changed it
            (:func:`changed_by`); None unless asked for.
        link_titles: The headline of each memory a changed link joins
            (:func:`link_ends`); None unless asked for.
    """

    agents: dict[str, tuple[str, ...]] | None = None
    link_titles: dict[str, str] | None = None


def diff_report(store: Store, result: Diff, *, details: bool = False) -> DiffReport:
    """Returns ``result`` as a report, with the agents and link ends if ``details``."""
    fields = {f: getattr(result, f) for f in result.__struct_fields__}
    if not details:
        return DiffReport(**fields)
    return DiffReport(
        **fields,
        agents=changed_by(store, result),
        link_titles=link_ends(store, result),
    )


def changed_by(store: Store, result: Diff) -> dict[str, tuple[str, ...]]:
    """Returns the agents whose commits changed each memory of ``result``.

    Each agent once, in the order of their first change: when claude rewrote
    a body and bob then its title, a review names both, not only the last.
    Read from the commits ``result.target`` has and ``result.base`` lacks
    (for ``A...B``, B's commits since the merge base); a memory none of them
    changed (in ``A B``, one only A changed) is left out.
    """
    ids = [m.id for m in (*result.added, *result.removed)]
    ids += [c.new.id for c in result.changed]
    in_base = {r.commit for r in store.history.records(result.base)}
    since = [r for r in store.history.records(result.target) if r.commit not in in_base]
    found: dict[str, dict[str, None]] = {}
    for rec in reversed(since):  # oldest first
        for memory_id in store.history.changed_memories(rec, ids):
            found.setdefault(memory_id, {})[rec.agent] = None
    return {memory_id: tuple(agents) for memory_id, agents in found.items()}


def link_ends(store: Store, result: Diff) -> dict[str, str]:
    """Returns the headline of each memory a link change of ``result`` joins.

    Read from the catalogs of both sides (the target's wins), not from the
    diff: the memory a new SUPERSEDES hides is seldom changed itself.
    """
    records = (*result.links_added, *result.links_removed)
    ends = {end for r in records for end in (r.source, r.target)}
    titles: dict[str, str] = {}
    for commit in (result.base, result.target) if ends else ():
        entries = live_catalog(store, commit).entries
        titles |= {m: entries[m].headline for m in ends if m in entries}
    return titles
