"""A tenant's own files: its personality overrides and its memory, in its own folder.

A tenant (a key made with `--tenant T`, not the owner) never reads or writes the owner's
`SOUL.md`, `config.toml`, `MEMORY.md` or `USER.md`: its edits land in
`$SEAM_HOME/tenants/<T>/personalities/<id>/` and `$SEAM_HOME/tenants/<T>/memory/`. Its
personality config may set only how the personality presents itself (`TENANT_KEYS`);
whatever loosens or tightens safety (`approval_mode`, `network`, `toolset`, `fs_reach`)
is the owner's alone, refused with a 403 naming the key.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from seam.apps.web import editing
from seam.apps.web.problems import Conflict, Forbidden, Invalid
from seam.wiring.runtime import Runtime
from seam.wiring.web import tenant_memory

# What a tenant's personality config.toml may set.
TENANT_KEYS = ("name", "description", "model", "fallback")


def tenant_folder(tenants: Path | None, tenant: str) -> Path:
    """`tenants/<tenant>`, refused when files are not stored here or the name would
    leave the folder."""
    if tenants is None:
        raise Conflict("a tenant's own files are not stored on this server")
    folder = (tenants / tenant).resolve()
    if folder.parent != tenants.resolve() or tenant in ("", ".", ".."):
        raise Invalid(f"{tenant!r} is not a tenant name that can hold files")
    return folder


def owner_only_keys(config: str) -> list[str]:
    """The keys of `config` a tenant may not set (a TOML error is reported by the
    personality check afterwards)."""
    try:
        table = tomllib.loads(config)
    except tomllib.TOMLDecodeError:
        return []
    return [k for k in table if k not in TENANT_KEYS]


def personality(runtime: Runtime, tenants: Path | None, tenant: str, pid: str) -> dict[str, Any]:
    """The tenant's override of `pid` (empty when it has none): never the owner's files."""
    editing.check_personality(runtime, pid)
    folder = tenant_folder(tenants, tenant) / "personalities" / pid if tenants else None
    soul, config = editing.read_files(folder)
    return {"id": pid, "soul": soul, "config": config, "tenant": tenant}


def put_personality(
    runtime: Runtime, tenants: Path | None, tenant: str, pid: str, files: tuple[str, str]
) -> dict[str, Any]:
    """Write the tenant's override of an existing personality, after refusing what only
    the owner may set and checking the files as loading them would."""
    soul, config = files
    editing.check_personality(runtime, pid)
    refused = owner_only_keys(config)
    if refused:
        raise Forbidden(
            f"{', '.join(refused)}: only the owner sets this; a tenant's personality may "
            f"set {', '.join(TENANT_KEYS)}"
        )
    folder = tenant_folder(tenants, tenant) / "personalities" / pid
    editing.write_files(folder, pid, soul, config)
    return personality(runtime, tenants, tenant, pid)


def memory_store(runtime: Runtime, tenants: Path | None, tenant: str) -> Any:
    """The tenant's own memory, with the owner's memory's checks and limits."""
    return tenant_memory(tenant_folder(tenants, tenant) / "memory", runtime.memory)


__all__ = [
    "TENANT_KEYS",
    "memory_store",
    "owner_only_keys",
    "personality",
    "put_personality",
    "tenant_folder",
]
