"""Personalities as folders: `<root>/<id>/SOUL.md` plus an optional `config.toml`.

The loop asks for its personality every turn, so `get` is a hot path: it stats two files
and re-reads them only when their stamp (mtime, size, inode) changed. An edit that breaks
a personality never breaks a running agent: the last good version keeps being served and
the problem is logged once and reported by `errors()`.
"""

from __future__ import annotations

import logging
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seam.contracts.guardrail import ApprovalMode
from seam.contracts.personality import Personality

if TYPE_CHECKING:
    from seam.contracts.budget import BudgetLimits

log = logging.getLogger(__name__)

SOUL_FILE = "SOUL.md"
CONFIG_FILE = "config.toml"
CONFIG_KEYS = (
    "name",
    "description",
    "model",
    "fallback",
    "toolset",
    "fs_reach",
    "approval_mode",
    "network",
    "budget",
)
APPROVAL_MODES: tuple[ApprovalMode, ...] = ("manual", "smart", "off")
REACH_KEYS = ("read", "write")

DEFAULT_SOUL = """\
You are Seam, a personal assistant on the user's computer.
Answer briefly and plainly.
Use the tools to work with files and run commands in the working directory.
If you are not sure, say so instead of guessing.
"""

DEFAULT_CONFIG = """\
# The default personality. SOUL.md, next to this file, is its system prompt.
name = "Seam"
description = "A general personal assistant."
# model = "openai:gpt-4o-mini"  # uncomment to pin a provider/model for this personality
# fallback = ["local"]           # tried in order when the model fails
# approval_mode = "manual"       # manual | smart (a second model judges) | off
# network = false                # may its commands use the network?
# Tools it may use; remove this line to allow every registered tool.
toolset = [
    "clarify", "delegate_task", "execute_code", "list_dir", "memory", "memory_search", "patch",
    "process", "read_file", "search_files", "session_search", "terminal", "todo", "web_fetch",
    "write_file",
]

[fs_reach]
# Where its file tools may read and write; "." is the session's working directory.
read = ["."]
write = ["."]

# Its own spending limits, as in config.toml's [budget]; the tightest limit wins.
# [budget]
# session_tokens = 200000
"""

_Stamp = tuple[int, int, int]


class _Invalid(Exception):
    """A personality's files exist but do not make a valid personality."""


@dataclass(slots=True)
class _Slot:
    soul: Path
    config: Path
    stamps: tuple[_Stamp | None, _Stamp | None] | None = None
    good: Personality | None = None
    error: str | None = None


def _valid_id(personality_id: str) -> bool:
    """Ids are plain folder names: nothing that could step outside the root."""
    return (
        bool(personality_id)
        and not personality_id.startswith(".")
        and "/" not in personality_id
        and "\\" not in personality_id
        and "\x00" not in personality_id
    )


def _stamp(path: Path) -> _Stamp | None:
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class FilePersonalityRegistry:
    def __init__(self, root: str, default_id: str = "default") -> None:
        self._root = Path(root)
        self._default = default_id
        self._slots: dict[str, _Slot] = {}

    @property
    def default_id(self) -> str:
        return self._default

    def get(self, personality_id: str) -> Personality:
        slot = self._refresh(personality_id)
        if slot is None:
            self._scan()
            known = ", ".join(sorted(self._slots)) or f"none; {self._root} has no personalities"
            raise KeyError(f"unknown personality {personality_id!r} (known: {known})")
        if slot.good is None:
            raise KeyError(f"personality {personality_id!r} is invalid: {slot.error}")
        return slot.good

    def list(self) -> list[Personality]:
        self._scan()
        return [s.good for _, s in sorted(self._slots.items()) if s.good is not None]

    def errors(self) -> dict[str, str]:
        """Problems on disk right now, by id; a listed id may still serve its last good version."""
        self._scan()
        return {pid: s.error for pid, s in sorted(self._slots.items()) if s.error is not None}

    def _scan(self) -> None:
        """Bring every folder under the root up to date: new ones appear, deleted ones vanish."""
        try:
            with os.scandir(self._root) as it:
                found = {e.name for e in it if e.is_dir() and _valid_id(e.name)}
        except (FileNotFoundError, NotADirectoryError):
            found = set()
        for gone in self._slots.keys() - found:
            del self._slots[gone]
        for pid in found:
            self._refresh(pid)

    def _refresh(self, pid: str) -> _Slot | None:
        """The up-to-date slot for `pid`, or None when it has no folder."""
        slot = self._slots.get(pid)
        if slot is None:
            if not _valid_id(pid):
                return None
            folder = self._root / pid
            slot = _Slot(folder / SOUL_FILE, folder / CONFIG_FILE)
        try:
            stamps = (_stamp(slot.soul), _stamp(slot.config))
        except OSError as exc:
            self._fail(pid, slot, f"{slot.soul.parent}: cannot read ({exc.strerror or exc})")
            return slot
        if stamps[0] is None and not slot.soul.parent.is_dir():
            self._slots.pop(pid, None)
            return None
        if stamps == slot.stamps:
            return slot
        # Stamps are taken before reading: an edit that lands mid-read changes them again,
        # so the next call re-reads instead of keeping a torn version.
        slot.stamps = stamps
        self._slots[pid] = slot
        try:
            if stamps[0] is None:
                # Also the brief moment some editors leave between moving the old file
                # away and writing the new one: the last good version bridges it.
                raise _Invalid(f"{slot.soul}: missing")
            slot.good = _load(pid, slot.soul, slot.config if stamps[1] is not None else None)
        except _Invalid as exc:
            self._fail(pid, slot, str(exc))
        else:
            slot.error = None
        return slot

    def _fail(self, pid: str, slot: _Slot, problem: str) -> None:
        self._slots[pid] = slot
        if problem == slot.error:  # already reported
            return
        slot.error = problem
        serving = "serving the last good version" if slot.good else "not available"
        log.warning("personality %r: %s (%s)", pid, problem, serving)


def _load(pid: str, soul_path: Path, config_path: Path | None) -> Personality:
    soul = _read(soul_path).strip()
    if not soul:
        raise _Invalid(f"{soul_path}: is empty")
    if config_path is None:
        return Personality(id=pid, soul=soul, name=pid)
    try:
        config = tomllib.loads(_read(config_path))
    except tomllib.TOMLDecodeError as exc:
        raise _Invalid(f"{config_path}: invalid TOML: {exc}") from None
    return _personality(pid, soul, config, config_path)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise _Invalid(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise _Invalid(f"{path}: cannot read ({exc.strerror or exc})") from None


def _personality(pid: str, soul: str, config: dict[str, Any], path: Path) -> Personality:
    unknown = sorted(config.keys() - set(CONFIG_KEYS))
    if unknown:
        raise _Invalid(f"{path}: unknown key {unknown[0]!r} (known: {', '.join(CONFIG_KEYS)})")
    reach = config.get("fs_reach", {})
    if not isinstance(reach, dict):
        raise _Invalid(f"{path}: 'fs_reach' must be a table with 'read' and 'write' lists")
    unknown = sorted(reach.keys() - set(REACH_KEYS))
    if unknown:
        raise _Invalid(f"{path}: unknown key 'fs_reach.{unknown[0]}' (known: read, write)")
    toolset = config.get("toolset")
    mode = _approval_mode(_text(config, "approval_mode", path) or "manual", path)
    network = config.get("network", False)
    if not isinstance(network, bool):
        raise _Invalid(f"{path}: 'network' must be true or false")
    return Personality(
        id=pid,
        soul=soul,
        name=_text(config, "name", path) or pid,
        description=_text(config, "description", path),
        model=_text(config, "model", path) or None,
        toolset=None if toolset is None else _names(toolset, "toolset", path),
        fs_read=_names(reach.get("read", ["."]), "fs_reach.read", path),
        fs_write=_names(reach.get("write", ["."]), "fs_reach.write", path),
        fallback=_names(config.get("fallback", []), "fallback", path),
        approval_mode=mode,
        network=network,
        budget=_budget(config.get("budget"), path),
    )


def _budget(table: Any, path: Path) -> BudgetLimits | None:
    """The personality's own `[budget]` (the keys of config.toml's), None without one;
    imported only for a personality that has one (`seam run` counts its imports)."""
    if table is None:
        return None
    if not isinstance(table, dict):
        raise _Invalid(f"{path}: 'budget' must be a table of limits (session_tokens = 10000)")
    from seam.contracts.budget import BudgetLimits

    try:
        return BudgetLimits.of(table)
    except ValueError as exc:
        raise _Invalid(f"{path}: budget: {exc}") from None


def _approval_mode(value: str, path: Path) -> ApprovalMode:
    """`value` as the mode it names; anything else is a one-line error naming the file."""
    for mode in APPROVAL_MODES:
        if value == mode:
            return mode
    raise _Invalid(
        f"{path}: 'approval_mode' must be one of {', '.join(APPROVAL_MODES)}, not {value!r}"
    )


def _text(config: dict[str, Any], key: str, path: Path) -> str:
    value = config.get(key, "")
    if not isinstance(value, str):
        raise _Invalid(f"{path}: {key!r} must be a string, not {type(value).__name__}")
    return value


def _names(value: Any, key: str, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _Invalid(f"{path}: {key!r} must be a list of non-empty strings")
    return tuple(value)


def write_default_personality(root: str) -> bool:
    """Seed `<root>/default` on first run; returns whether anything was written.

    Once SOUL.md exists nothing is touched, so a user's edits, and a config.toml they
    deleted on purpose, stay as they left them.
    """
    folder = Path(root) / "default"
    if (folder / SOUL_FILE).exists():
        return False
    folder.mkdir(parents=True, exist_ok=True)
    # SOUL.md last: a crash in between leaves no SOUL.md, so the next run finishes the job.
    for name, text in ((CONFIG_FILE, DEFAULT_CONFIG), (SOUL_FILE, DEFAULT_SOUL)):
        try:
            with (folder / name).open("x", encoding="utf-8") as f:
                f.write(text)
        except FileExistsError:
            continue
    return True
