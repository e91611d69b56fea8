"""What the page edits besides sessions: personalities' files and the memory files.

Every write is checked first exactly as the files are checked when loaded or written by
the agent, so a rejected write changes nothing; accepted files are replaced atomically.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from seam.apps.web.problems import Conflict, Invalid, NotFound
from seam.contracts.memory import MemoryTarget
from seam.wiring.runtime import Runtime
from seam.wiring.web import personality_problem


def check_personality(runtime: Runtime, personality: str) -> None:
    try:
        runtime.personalities.get(personality)
    except KeyError as exc:
        raise NotFound(str(exc.args[0] if exc.args else exc)) from None


def personalities(runtime: Runtime) -> list[dict[str, Any]]:
    registry = runtime.personalities
    default = getattr(registry, "default_id", None)
    return [
        {
            "id": p.id,
            "name": p.name,
            "description": p.description,
            "model": p.model,
            "approval_mode": p.approval_mode,
            "default": p.id == default,
        }
        for p in registry.list()
    ]


def personality(runtime: Runtime, folders: Path | None, pid: str) -> dict[str, Any]:
    """A personality's SOUL.md and config.toml, as stored (its soul when not in files)."""
    check_personality(runtime, pid)
    soul, config = read_files(folders / pid if folders is not None else None)
    return {"id": pid, "soul": soul or runtime.personalities.get(pid).soul, "config": config}


def put_personality(
    runtime: Runtime, folders: Path | None, pid: str, soul: str, config: str
) -> dict[str, Any]:
    """Write SOUL.md and config.toml after checking them exactly as the files are
    checked when loaded (a rejected write changes nothing)."""
    if folders is None:
        raise Conflict("personalities are not stored in files here")
    write_files(folders / pid, pid, soul, config)
    return personality(runtime, folders, pid)


def read_files(folder: Path | None) -> tuple[str, str]:
    """A personality folder's SOUL.md and config.toml ("" for each one missing)."""
    soul = config = ""
    if folder is not None:
        with contextlib.suppress(FileNotFoundError):
            soul = (folder / "SOUL.md").read_text(encoding="utf-8")
        with contextlib.suppress(FileNotFoundError):
            config = (folder / "config.toml").read_text(encoding="utf-8")
    return soul, config


def write_files(folder: Path, pid: str, soul: str, config: str) -> None:
    """Check the files as loading them as `pid` would, then replace them atomically (no
    config: the file goes)."""
    problem = personality_problem(pid, soul, config)
    if problem is not None:
        raise Invalid(problem)
    folder.mkdir(parents=True, exist_ok=True)
    atomic(folder / "SOUL.md", soul)
    if config.strip():
        atomic(folder / "config.toml", config)
    else:
        with contextlib.suppress(FileNotFoundError):
            (folder / "config.toml").unlink()


def memory(store: Any) -> dict[str, list[str]]:
    """The entries of a memory (the owner's, or a tenant's own)."""
    if not hasattr(store, "entries"):
        return {"memory": [], "user": []}
    return {t: store.entries(t) for t in ("memory", "user")}


def put_memory(store: Any, body: Mapping[MemoryTarget, list[str]]) -> dict[str, list[str]]:
    """Replace the entries of the targets given. Each list is first built in a scratch
    copy through the memory's own `add` (the checks the memory tool applies: no
    injections, no secrets, no duplicates, the size limit), so a rejected write
    changes nothing."""
    from seam.wiring.memory import MarkdownMemory

    if not isinstance(store, MarkdownMemory):
        raise Conflict("this server has no editable memory")
    for target, text in _staged(store, body).items():
        real = store.path(target)
        real.parent.mkdir(parents=True, exist_ok=True)
        atomic(real, text)
    return memory(store)


def _staged(store: Any, body: Mapping[MemoryTarget, list[str]]) -> dict[MemoryTarget, str]:
    """Each target's file text as `store` would write it, built in a scratch copy."""
    from seam.wiring.memory import MarkdownMemory, MemoryEntryError

    staged: dict[MemoryTarget, str] = {}
    with tempfile.TemporaryDirectory() as scratch:
        trial = MarkdownMemory(
            scratch,
            memory_limit=store.limits["memory"],
            user_limit=store.limits["user"],
            scanner=store.scanner,
            redactor=store.redactor,
        )
        for target, entries in body.items():
            try:
                for entry in entries:
                    trial.add(target, entry)
            except (MemoryEntryError, ValueError, KeyError) as exc:
                raise Invalid(f"{target}: {exc.args[0] if exc.args else exc}") from None
            path = trial.path(target)
            staged[target] = path.read_text(encoding="utf-8") if path.exists() else ""
    return staged


def atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


__all__ = [
    "atomic",
    "check_personality",
    "memory",
    "personalities",
    "personality",
    "put_memory",
    "put_personality",
    "read_files",
    "write_files",
]
