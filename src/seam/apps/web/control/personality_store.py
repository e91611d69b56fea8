"""Where a caller's personality settings are read from and written to: the owner's
`config.toml` in the personalities folder, a tenant's own override in its folder.

A tenant's edit is refused (403 naming the key) when it sets what only the owner sets
(`tenant_files.TENANT_KEYS`: safety settings are never a tenant's), and every file is
checked by loading it as a start-up would before it replaces the old one, so a refused
edit writes nothing. A tenant's override may set its config alone: the owner's SOUL.md
stays its soul, so the check borrows the owner's soul and only config.toml is written.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seam.apps.web import editing, tenant_files
from seam.apps.web.auth import Principal
from seam.apps.web.problems import Conflict, Forbidden, Invalid
from seam.wiring.web import personality_problem

if TYPE_CHECKING:
    from seam.apps.web.backend import WebBackend


@dataclass(frozen=True)
class PersonalityFiles:
    """One caller's files of one personality: its folder (None: not stored in files),
    whether they are a tenant's override, and what the folder holds now."""

    pid: str
    folder: Path | None
    tenant: bool
    soul: str
    config: str


def files_of(backend: WebBackend, who: Principal, pid: str) -> PersonalityFiles:
    """The caller's files of `pid` (a tenant: its override, empty when it has none)."""
    editing.check_personality(backend.runtime, pid)
    if who.owner:
        folders = backend.personalities_dir
        folder = folders / pid if folders is not None else None
    else:
        tenants = tenant_files.tenant_folder(backend.tenants_dir, who.tenant)
        folder = tenants / "personalities" / pid
    soul, config = editing.read_files(folder)
    return PersonalityFiles(pid, folder, not who.owner, soul, config)


def editable_keys(who: Principal, keys: list[str]) -> list[str]:
    """Which of the settings' `keys` this caller may set."""
    return keys if who.owner else [k for k in keys if k in tenant_files.TENANT_KEYS]


def save_config(backend: WebBackend, files: PersonalityFiles, config: str) -> None:
    """Check `config` as the caller's config.toml of the personality, then write it."""
    if files.folder is None:
        raise Conflict("personalities are not stored in files here")
    if not files.tenant:
        soul = files.soul or backend.runtime.personalities.get(files.pid).soul
        editing.write_files(files.folder, files.pid, soul, config)
        return
    refused = tenant_files.owner_only_keys(config)
    if refused:
        raise Forbidden(
            f"{', '.join(refused)}: only the owner sets this; a tenant's personality may set "
            f"{', '.join(tenant_files.TENANT_KEYS)}"
        )
    refs = tenant_files.refused_refs(config)
    if refs:
        raise Forbidden(refs[0])
    soul = files.soul.strip() or backend.runtime.personalities.get(files.pid).soul
    problem = personality_problem(files.pid, soul, config)
    if problem is not None:
        raise Invalid(problem)
    _write_config(files.folder, config)


def _write_config(folder: Path, config: str) -> None:
    """Replace config.toml atomically (an empty one: the file goes)."""
    folder.mkdir(parents=True, exist_ok=True)
    if config.strip():
        editing.atomic(folder / "config.toml", config)
    else:
        with contextlib.suppress(FileNotFoundError):
            (folder / "config.toml").unlink()


def effective(backend: WebBackend, pid: str) -> dict[str, Any]:
    """The personality as the owner's files load it (what a field left unset means)."""
    p = backend.runtime.personalities.get(pid)
    return {
        "name": p.name,
        "description": p.description,
        "model": p.model,
        "fallback": list(p.fallback),
        "toolset": None if p.toolset is None else list(p.toolset),
        "approval_mode": p.approval_mode,
        "network": p.network,
        "fs_reach": {"read": list(p.fs_read), "write": list(p.fs_write)},
        "budget": None if p.budget is None else p.budget.table(),
    }


__all__ = ["PersonalityFiles", "editable_keys", "effective", "files_of", "save_config"]
