"""The calls that manage a server's keys: admin keys only, and never tools."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from ctx.hub.access import Caller, ForbiddenError
from ctx.hub.keys import (
    ApiKey,
    CreatedKey,
    RevokedKey,
    create_key,
    list_keys,
    revoke_key,
)
from ctx.hub.workspace import Workspace

__all__ = [
    "KeyCreateRequest",
    "KeyRevokeRequest",
    "KeysRequest",
    "key_create",
    "key_revoke",
    "keys",
]


class KeysRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """List the keys (admin keys only)."""


class KeyCreateRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Make a key (admin keys only); its token is in the answer, once."""

    label: Annotated[str, Meta(description="Who the key is for.")]
    read: Annotated[
        tuple[str, ...], Meta(description="Branch patterns it may read, e.g. 'main'.")
    ] = ()
    write: Annotated[
        tuple[str, ...],
        Meta(description="Branch patterns it may write (and read), e.g. 'agent/*'."),
    ] = ()
    admin: Annotated[bool, Meta(description="It may manage keys.")] = False


class KeyRevokeRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Revoke a key (admin keys only)."""

    id: Annotated[str, Meta(description="The key's id or label.", min_length=1)]


def _admin(caller: Caller) -> None:
    # No key is no admin: a loopback server that answers without keys
    # answers every local user, who must not mint keys that outlive that.
    if caller.scope is None or not getattr(caller.scope, "admin", False):
        raise ForbiddenError(
            "Only an admin key may manage keys.",
            hint="`ctx keys create LABEL --admin` makes one.",
        )


def keys(ws: Workspace, caller: Caller, req: KeysRequest) -> list[ApiKey]:
    """Lists the keys."""
    _admin(caller)
    return list_keys(ws)


def key_create(ws: Workspace, caller: Caller, req: KeyCreateRequest) -> CreatedKey:
    """Makes a key."""
    _admin(caller)
    return create_key(ws, req.label, read=req.read, write=req.write, admin=req.admin)


def key_revoke(ws: Workspace, caller: Caller, req: KeyRevokeRequest) -> RevokedKey:
    """Revokes a key."""
    _admin(caller)
    return revoke_key(ws, req.id)
