"""Memory as two markdown files a person can read and edit: MEMORY.md and USER.md.

Entries are separated by a line holding only `§`. Every write goes through the same
rules whether the agent or the CLI makes it (limits, duplicates, injection and secret
checks) and lands on disk at once, atomically. What the model sees is different on
purpose: `prefetch` freezes a snapshot at a session's first turn, so the system prompt
stays byte-identical for the whole session (prompt caches stay warm) and a write shows
only from the next session on. That snapshot is read again only when a file changed
(`snapshots.py`: one `os.stat` per file; a read runs in a thread, off the event loop).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from seam.contracts.memory import MEMORY_TARGETS, MemoryEntryError, MemoryTarget, MemoryUsage
from seam.contracts.messages import Message
from seam.contracts.scanning import (
    NO_INJECTION_SCANNER,
    NO_REDACTOR,
    InjectionScanner,
    Redactor,
)
from seam.plugins.memory.snapshots import StatCachedText

# The contract's names, kept here too for the CLI and older imports.
Target = MemoryTarget
TARGETS = MEMORY_TARGETS
FILES: dict[Target, str] = {"memory": "MEMORY.md", "user": "USER.md"}
TITLES: dict[Target, str] = {"memory": "Memory", "user": "About the user"}
MEMORY_LIMIT = 2200  # chars of MEMORY.md
USER_LIMIT = 1375  # chars of USER.md
SEPARATOR = "§"
_JOIN = f"\n{SEPARATOR}\n"
# Snapshots kept per process; a session evicted here re-reads the files on its next turn.
MAX_FROZEN_SESSIONS = 512
CANDIDATE_CHARS = 60  # each candidate named in an ambiguous-match error is cut to this
_REDACTED = re.compile(r"\[REDACTED:(\w+)\]")
_MISSING = object()


def parse_entries(text: str) -> list[str]:
    """Entries of a memory file, tolerant of hand edits: trailing spaces, CRLF, blank
    lines around `§`, and empty entries (doubled separators) are all ignored."""
    entries: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        line = line.rstrip()
        if line.strip() == SEPARATOR:
            entries.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    entries.append("\n".join(current).strip())
    return [entry for entry in entries if entry]


def render_entries(entries: Sequence[str]) -> str:
    return _JOIN.join(entries) + "\n" if entries else ""


def used_chars(entries: Sequence[str]) -> int:
    """Chars the entries take in their file, separators included (the limit counts both)."""
    return len(_JOIN.join(entries))


def format_for_system_prompt(
    memory: Sequence[str],
    user: Sequence[str],
    memory_limit: int = MEMORY_LIMIT,
    user_limit: int = USER_LIMIT,
) -> str | None:
    """The memory block of the system prompt, or None when both files are empty.

    A hand-edited file may run past its limit; the block keeps only the entries that
    fit, so one oversized file cannot blow up every request."""
    sections = [
        _section(title, entries, limit)
        for title, entries, limit in (
            (TITLES["memory"], memory, memory_limit),
            (TITLES["user"], user, user_limit),
        )
        if entries
    ]
    return "\n\n".join(sections) if sections else None


def _section(title: str, entries: Sequence[str], limit: int) -> str:
    used = used_chars(entries)
    lines = [f"## {title} ({used * 100 // limit}% of {limit:,} chars)"]
    total = 0
    for shown, entry in enumerate(entries):
        total += len(entry) + (len(_JOIN) if shown else 0)
        if total > limit:
            lines.append(f"({len(entries) - shown} more entries over the limit not shown)")
            break
        lines.append("- " + entry.replace("\n", "\n  "))
    return "\n".join(lines)


class MarkdownMemory:
    """`EditableMemory` over `folder/MEMORY.md` and `folder/USER.md`, plus entry edits.

    The files are read on every edit rather than cached, so a person's hand edits (or
    another process's writes) are never overwritten with stale entries."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        memory_limit: int = MEMORY_LIMIT,
        user_limit: int = USER_LIMIT,
        scanner: InjectionScanner = NO_INJECTION_SCANNER,
        redactor: Redactor = NO_REDACTOR,
    ) -> None:
        """`scanner`, `redactor`: what refuses entries that read like injections or hold
        secrets (wiring hands in `plugins.safety`'s; the defaults refuse nothing)."""
        if memory_limit <= 0 or user_limit <= 0:
            raise ValueError("memory limits must be positive")
        self.folder = Path(folder)
        self.limits: dict[Target, int] = {"memory": memory_limit, "user": user_limit}
        self.scanner = scanner
        self.redactor = redactor
        self._frozen: OrderedDict[str, str | None] = OrderedDict()
        self._current = StatCachedText([self.path("memory"), self.path("user")], self.snapshot)

    # MemoryProvider

    async def prefetch(self, session_key: str) -> str | None:
        snapshot = self._frozen.get(session_key, _MISSING)
        if snapshot is _MISSING:
            snapshot = await self._current.current()
            self._frozen[session_key] = snapshot
            if len(self._frozen) > MAX_FROZEN_SESSIONS:
                self._frozen.popitem(last=False)
        else:
            self._frozen.move_to_end(session_key)
        return snapshot  # type: ignore[return-value]  # not _MISSING here

    async def sync(self, session_key: str, messages: Sequence[Message]) -> None:
        """Nothing to do: memory is written through the `memory` tool, not mined from turns."""

    # Reading

    def path(self, target: Target) -> Path:
        return self.folder / FILES[_target(target)]

    def entries(self, target: Target) -> list[str]:
        try:
            text = self.path(target).read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return parse_entries(text)

    def usage(self, target: Target) -> MemoryUsage:
        target = _target(target)
        return MemoryUsage(FILES[target], used_chars(self.entries(target)), self.limits[target])

    def snapshot(self) -> str | None:
        """The current files as a system-prompt block (not frozen: see `prefetch`)."""
        limits = self.limits
        return format_for_system_prompt(
            self.entries("memory"), self.entries("user"), limits["memory"], limits["user"]
        )

    # Writing

    def add(self, target: Target, content: str) -> MemoryUsage:
        entries = self.entries(target)
        entry = self.checked_entry(target, content)
        if entry in entries:
            raise MemoryEntryError(f"{FILES[target]} already holds exactly this entry")
        return self._write(target, [*entries, entry])

    def replace(self, target: Target, match: str, content: str) -> MemoryUsage:
        entries = self.entries(target)
        index = self._find(target, entries, match)
        entry = self.checked_entry(target, content)
        if entry in entries:
            raise MemoryEntryError(f"{FILES[target]} already holds exactly this entry")
        entries[index] = entry
        return self._write(target, entries)

    def remove(self, target: Target, match: str) -> MemoryUsage:
        entries = self.entries(target)
        del entries[self._find(target, entries, match)]
        return self._write(target, entries)

    def checked_entry(self, target: Target, content: str) -> str:
        """The entry as it will be stored, or an error naming what is wrong with it."""
        entry = parse_entries(content)
        if len(entry) != 1:
            if not entry:
                raise MemoryEntryError("the entry is empty")
            raise MemoryEntryError(f"an entry may not contain a line holding only {SEPARATOR}")
        text = entry[0]
        findings = self.scanner.scan(text)
        if findings:
            found = "; ".join(f"{f.kind}: {f.excerpt!r}" for f in findings)
            raise MemoryEntryError(f"refused: the entry reads like a prompt injection ({found})")
        redacted = self.redactor.redact(text)
        if redacted is not text:
            kinds = set(_REDACTED.findall(redacted)) - set(_REDACTED.findall(text))
            raise MemoryEntryError(
                f"refused: the entry holds a secret ({', '.join(sorted(kinds))}); "
                "never store secrets in memory"
            )
        limit = self.limits[target]
        if len(text) > limit:
            raise MemoryEntryError(
                f"the entry is {len(text):,} chars; {FILES[target]} holds at most {limit:,}"
            )
        return text

    def _find(self, target: Target, entries: list[str], match: str) -> int:
        if not match.strip():
            raise MemoryEntryError("match is empty: give a substring of the entry to change")
        found = [i for i, entry in enumerate(entries) if match in entry]
        if len(found) > 1:
            exact = [i for i in found if entries[i] == match.strip()]
            if len(exact) == 1:
                return exact[0]
            names = "; ".join(repr(_cut(entries[i])) for i in found)
            raise MemoryEntryError(
                f"{match!r} matches {len(found)} entries in {FILES[target]}: {names}. "
                "Use a longer substring that only one of them contains."
            )
        if not found:
            raise MemoryEntryError(f"no entry in {FILES[target]} contains {match!r}")
        return found[0]

    def _write(self, target: Target, entries: list[str]) -> MemoryUsage:
        usage = MemoryUsage(FILES[target], used_chars(entries), self.limits[target])
        if usage.chars > usage.limit:
            raise MemoryEntryError(
                f"{FILES[target]} would hold {usage.chars:,} of {usage.limit:,} chars; "
                "replace or remove entries first"
            )
        atomic_write(self.path(target), render_entries(entries))
        return usage


def _target(target: str) -> Target:
    """A checked target: the tool and CLI pass through what a model or person typed."""
    if target not in FILES:
        raise MemoryEntryError(f"unknown memory target {target!r}; use memory or user")
    return target


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= CANDIDATE_CHARS else text[: CANDIDATE_CHARS - 1] + "…"


def atomic_write(path: Path, text: str) -> None:
    """Temp file + rename: readers see the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        Path(temp).replace(path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
