"""What a repository on this machine asks of every push it receives.

A push to a local path or ``file://`` puts ctx's packs straight into the
repository and moves its refs (:func:`~ctx.engine.transfer.push`): fast, but
it bypasses what ``git receive-pack`` enforces there, which a team guarding
a shared bare repository relies on: its hooks (``pre-receive``, ``update``
refuse a push; ``post-receive`` tells others of it) and its ``receive.*``
rules (``denyNonFastForwards`` refuses a forced push, ``denyDeletes`` a
deletion). Where the repository has any of them, the push goes through git's
own ``receive-pack``, as ``git push`` to that path does.
"""

from __future__ import annotations

import os
from contextlib import closing

from dulwich.errors import NotGitRepository
from dulwich.repo import Repo

__all__ = ["has_receive_rules"]

_HOOKS = (
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
)
"""The hooks git's receive-pack runs."""

_RULES = (
    (b"receive", b"denyNonFastForwards"),
    (b"receive", b"denyDeletes"),
    (b"receive", b"fsckObjects"),
    (b"transfer", b"fsckObjects"),
)
"""The settings that make receive-pack refuse what a direct write would take."""


def has_receive_rules(path: str) -> bool:
    """Returns whether the repository at ``path`` has hooks or rules for pushes.

    Read from its common git folder, with the user's and the system's git
    configuration under its own (as git reads them); the hooks from
    ``core.hooksPath`` when it is set, else its ``hooks`` folder.
    """
    try:
        with closing(Repo(path)) as named, closing(Repo(named.commondir())) as target:
            config = target.get_config_stack()
            common = target.commondir()
    except (NotGitRepository, OSError):
        return False  # the push says what is wrong with it
    for section, name in _RULES:
        try:
            if config.get_boolean(section, name, False):
                return True
        except (KeyError, ValueError):
            continue
    try:
        hooks = os.fsdecode(config.get((b"core",), b"hooksPath"))
        hooks = os.path.join(common, os.path.expanduser(hooks))
    except KeyError:
        hooks = os.path.join(common, "hooks")
    return any(os.access(os.path.join(hooks, hook), os.X_OK) for hook in _HOOKS)
