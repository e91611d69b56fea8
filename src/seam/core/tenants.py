"""Sessions seen through tenants: a tenant's sessions are those whose durable key names
it, so one store serves many tenants and a name resolves only within its own."""

from __future__ import annotations

from seam.core.identity import (
    assert_public_session_name,
    create_session_storage_key,
    parse_session_storage_key,
)


def tenant_session_key(tenant: str, harness: str, name: str) -> str:
    """The durable key of `tenant`'s public session `name` (ValueError for a bad name)."""
    return create_session_storage_key(tenant, harness, assert_public_session_name(name))


def session_name(key: str) -> str | None:
    """The public name a session key carries, or None when it is not a session key."""
    try:
        return parse_session_storage_key(key)[2]
    except ValueError:
        return None


def tenant_session_name(tenant: str, key: str) -> str | None:
    """The public name of `key` when it is one of `tenant`'s root sessions."""
    try:
        owner, _, name = parse_session_storage_key(key)
    except ValueError:
        return None
    return name if owner == tenant else None


__all__ = ["session_name", "tenant_session_key", "tenant_session_name"]
