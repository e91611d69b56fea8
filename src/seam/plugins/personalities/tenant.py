"""A tenant's override of one of the owner's personalities, read from its own folder:
`<tenant folder>/<id>/SOUL.md` and a `config.toml` that may set only how the personality
presents itself and which of the owner's providers answers (`TENANT_KEYS`).

Read on every turn of the tenant's sessions like the owner's files are (re-read only
when a file's stamp changed). A broken override is logged once and leaves the owner's
personality in place; a key the tenant may not set is ignored (the web refuses it before
it is written; a hand edit cannot sneak one in either).
"""

from __future__ import annotations

import logging
import tomllib
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from seam.plugins.personalities.files import CONFIG_FILE, SOUL_FILE, _stamp, _valid_id

log = logging.getLogger(__name__)

# What a tenant's personality config.toml may set.
TENANT_KEYS = ("name", "description", "model", "fallback")
# Overrides kept read; one evicted is read again on its next turn.
MAX_OVERRIDES = 1024
_Stamps = tuple[tuple[int, int, int] | None, tuple[int, int, int] | None]


def tenant_ref_problem(ref: str) -> str | None:
    """Why a tenant may not name provider `ref` (None: it may). A ref names one of the
    owner's configured providers and a model; `local:<path>` would name a file on the
    owner's machine, so a tenant names the local model only as `local`."""
    kind, sep, rest = ref.strip().partition(":")
    if kind == "local" and sep and rest:
        return f"{ref!r}: a tenant names the local model as 'local', never a file"
    return None


class TenantOverrideFiles:
    """`(tenant, personality id) -> the fields its override sets`, or None when it has
    none (or a broken one). `folder_of(tenant)` is where the tenant's overrides live
    (None: a tenant name that cannot hold files)."""

    def __init__(self, folder_of: Callable[[str], Path | None]) -> None:
        self._folder_of = folder_of
        self._folders: dict[str, Path | None] = {}  # folder_of resolves paths: once each
        self._read: OrderedDict[tuple[str, str], tuple[_Stamps, dict[str, Any] | None]] = (
            OrderedDict()
        )

    def __call__(self, tenant: str, pid: str) -> dict[str, Any] | None:
        if tenant not in self._folders:
            if len(self._folders) >= MAX_OVERRIDES:
                self._folders.clear()
            self._folders[tenant] = self._folder_of(tenant)
        root = self._folders[tenant]
        if root is None or not _valid_id(pid):
            return None
        folder = root / pid
        stamps = (_stamp(folder / SOUL_FILE), _stamp(folder / CONFIG_FILE))
        if stamps == (None, None):
            self._read.pop((tenant, pid), None)
            return None
        kept = self._read.get((tenant, pid))
        if kept is not None and kept[0] == stamps:
            self._read.move_to_end((tenant, pid))
            return kept[1]
        fields = _load(folder, stamps)
        self._read[(tenant, pid)] = (stamps, fields)
        if len(self._read) > MAX_OVERRIDES:
            self._read.popitem(last=False)
        return fields


def _load(folder: Path, stamps: _Stamps) -> dict[str, Any] | None:
    """The override's fields, or None (logged) when its files are broken."""
    try:
        fields: dict[str, Any] = {}
        if stamps[0] is not None:
            soul = (folder / SOUL_FILE).read_text(encoding="utf-8").strip()
            if soul:
                fields["soul"] = soul
        if stamps[1] is not None:
            config = tomllib.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
            fields.update(_config_fields(config, folder / CONFIG_FILE))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError) as exc:
        log.warning("tenant personality %s: %s (the owner's is used)", folder, exc)
        return None
    return fields


def _config_fields(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """The `TENANT_KEYS` of `config`, checked; ValueError naming the first bad one."""
    ignored = sorted(k for k in config if k not in TENANT_KEYS)
    if ignored:
        log.warning("%s: ignored %s (only the owner sets them)", path, ", ".join(ignored))
    fields: dict[str, Any] = {}
    for key in ("name", "description", "model"):
        value = config.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{key!r} must be a string")
        if value or (key == "description" and value is not None):
            fields[key] = value  # an empty name or model: the owner's stays
    if "fallback" in config:
        refs = config["fallback"]
        if not isinstance(refs, list) or not all(isinstance(r, str) and r for r in refs):
            raise ValueError("'fallback' must be a list of non-empty strings")
        fields["fallback"] = tuple(refs)
    for ref in [fields.get("model") or "", *fields.get("fallback", ())]:
        problem = tenant_ref_problem(ref) if ref else None
        if problem is not None:
            raise ValueError(problem)
    return fields


__all__ = ["MAX_OVERRIDES", "TENANT_KEYS", "TenantOverrideFiles", "tenant_ref_problem"]
