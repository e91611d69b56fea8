"""A tenant's own files: its personality overrides and its memory, in its own folder.

A tenant (a key made with `--tenant T`, not the owner) never reads or writes the owner's
`SOUL.md`, `config.toml`, `MEMORY.md` or `USER.md`: its edits land in
`$SEAM_HOME/tenants/<T>/personalities/<id>/` and `$SEAM_HOME/tenants/<T>/memory/`. Its
personality config may set only how the personality presents itself (`TENANT_KEYS`);
whatever loosens or tightens safety (`approval_mode`, `network`, `toolset`, `fs_reach`)
is the owner's alone, refused with a 403 naming the key. Its `model` and `fallback` name
one of the owner's configured providers (whose base URL is the owner's), never a file.
The tenant's turns then use these files (see `wiring/tenant_dirs.py`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from seam.apps.web import editing
from seam.apps.web.problems import Conflict, Forbidden, Invalid
from seam.wiring.runtime import Runtime
from seam.wiring.web import TENANT_KEYS, tenant_dir, tenant_memory, tenant_ref_problem


def tenant_folder(tenants: Path | None, tenant: str) -> Path:
    """`tenants/<tenant>`, refused when files are not stored here or the name would
    leave the folder."""
    if tenants is None:
        raise Conflict("a tenant's own files are not stored on this server")
    folder = tenant_dir(tenants, tenant)
    if folder is None:
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


def refused_refs(config: str) -> list[str]:
    """Why the provider refs `config` names are not a tenant's to name (none: they are)."""
    try:
        table = tomllib.loads(config)
    except tomllib.TOMLDecodeError:
        return []
    model, fallback = table.get("model"), table.get("fallback")
    refs = [model] if isinstance(model, str) else []
    refs += [r for r in fallback if isinstance(r, str)] if isinstance(fallback, list) else []
    return [p for p in map(tenant_ref_problem, refs) if p is not None]


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
    problems = refused_refs(config)
    if problems:
        raise Forbidden(problems[0])
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
