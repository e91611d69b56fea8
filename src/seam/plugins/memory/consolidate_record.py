"""The record of every consolidation run, kept beside the memory: one JSON file per run
in `memory/consolidations/` (`<id>.json`), written atomically.

A record holds what a person needs to see and undo a run: when and why it ran, each
file's text before and after, each operation with its reason, what was refused and why,
how many model calls it made (none on an idle run: `note` says so), the fingerprint of
the files it left, and once undone, when and what the revert wrote.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from seam.plugins.memory.markdown import _cut


@dataclass(frozen=True, slots=True)
class FileChange:
    """One memory file, named relative to SEAM_HOME (`memory/MEMORY.md`,
    `tenants/<T>/memory/USER.md`), before and after."""

    name: str
    before: str
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True, slots=True)
class Refusal:
    """A model answer not applied to `file` (refused, or no answer), and why."""

    file: str
    reason: str

    def line(self) -> str:
        return f"refused in {self.file}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Change:
    """One operation: `dedupe`, `merge`, `drop` or `shorten`, the entries it took, the
    entry it left (None: none), and why."""

    file: str
    op: str
    entries: tuple[str, ...]
    result: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run (see the module doc); `revert`: what undoing it wrote, once undone."""

    id: str
    time: float
    trigger: str  # "manual", or "cron" for a scheduled run
    files: tuple[FileChange, ...]
    operations: tuple[Change, ...] = ()
    refused: tuple[Refusal, ...] = ()
    model_calls: int = 0
    note: str = ""
    fingerprint: str = ""
    reverted_at: float | None = None
    revert: tuple[FileChange, ...] = field(default=())

    @property
    def changed(self) -> tuple[FileChange, ...]:
        return tuple(f for f in self.files if f.changed)

    def summary(self) -> str:
        """One line for `seam memory history`."""
        when = _when(self.time)
        counts: dict[str, int] = {}
        for change in self.operations:
            counts[change.op] = counts.get(change.op, 0) + 1
        did = ", ".join(f"{n} {op}" for op, n in sorted(counts.items())) or "no change"
        refused = f", {len(self.refused)} refused" if self.refused else ""
        undone = "  (reverted)" if self.reverted_at is not None else ""
        note = f"  {self.note}" if self.note else ""
        calls = f"{self.model_calls} model call{'s' * (self.model_calls != 1)}"
        return f"{self.id}  {when}  {self.trigger:6}  {did}{refused}; {calls}{note}{undone}"


def detail_lines(record: RunRecord) -> list[str]:
    """Each operation with its reason, then each refusal: what `seam memory history ID`
    and `seam memory consolidate` print before the diff."""
    lines = []
    for change in record.operations:
        took = " + ".join(repr(_cut(entry)) for entry in change.entries)
        left = f" -> {_cut(change.result)!r}" if change.result is not None else ""
        lines.append(f"{change.op} in {change.file}: {took}{left}  ({change.reason})")
    lines += [refusal.line() for refusal in record.refused]
    if record.reverted_at is not None:
        lines.append(f"reverted at {_when(record.reverted_at)}")
    return lines


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def new_id(now: float, taken: Sequence[str]) -> str:
    """Sortable by time, then by order within a second: `20261205-061502-1`. Made under
    the consolidation lock, so `taken` (the ids so far) makes it unique."""
    base = datetime.fromtimestamp(now, UTC).strftime("%Y%m%d-%H%M%S-")
    return base + str(1 + sum(1 for i in taken if i.startswith(base)))


def fingerprint(texts: Iterable[tuple[str, str]]) -> str:
    """One hash of every (file name, text): equal exactly when no file changed."""
    digest = hashlib.sha256()
    for name, text in sorted(texts):
        digest.update(json.dumps([name, text]).encode())
    return digest.hexdigest()


def unified_diff(change: FileChange) -> str:
    """The change as `diff -u` prints it (empty when the file did not change)."""
    lines = difflib.unified_diff(
        change.before.splitlines(keepends=True),
        change.after.splitlines(keepends=True),
        fromfile=f"a/{change.name}",
        tofile=f"b/{change.name}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def diffs(changes: Sequence[FileChange]) -> str:
    return "".join(unified_diff(change) for change in changes)


class RecordBook:
    """The records in `folder`, one `<id>.json` each."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    def save(self, record: RunRecord) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps(dataclasses.asdict(record), ensure_ascii=False, indent=1)
        fd, temp = tempfile.mkstemp(prefix=".run.", suffix=".tmp", dir=self.folder)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text + "\n")
        Path(temp).replace(self.folder / f"{record.id}.json")

    def ids(self) -> list[str]:
        """Every run's id, oldest first (a second's runs in the order they ran)."""
        if not self.folder.is_dir():
            return []
        return sorted((p.stem for p in self.folder.glob("*.json")), key=_order)

    def load(self, run_id: str) -> RunRecord | None:
        """The run with id `run_id` (or the one run whose id starts with it)."""
        found = [i for i in self.ids() if i == run_id] or [
            i for i in self.ids() if run_id and i.startswith(run_id)
        ]
        if len(found) != 1:
            return None
        try:
            text = (self.folder / f"{found[0]}.json").read_text(encoding="utf-8")
            return record_from(json.loads(text))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"the record of run {found[0]} cannot be read: {exc}") from None

    def last(self) -> RunRecord | None:
        ids = self.ids()
        return self.load(ids[-1]) if ids else None

    def all(self) -> list[RunRecord]:
        """Every readable record, oldest first (an unreadable one is left out)."""
        found = []
        for run_id in self.ids():
            with contextlib.suppress(ValueError):
                found.append(self.load(run_id))
        return [record for record in found if record is not None]


def _order(run_id: str) -> tuple[str, int]:
    base, _, seq = run_id.rpartition("-")
    return (base, int(seq)) if seq.isdigit() else (run_id, 0)


def record_from(data: dict[str, Any]) -> RunRecord:
    return RunRecord(
        id=data["id"],
        time=data["time"],
        trigger=data["trigger"],
        files=tuple(FileChange(**f) for f in data["files"]),
        operations=tuple(
            Change(**{**c, "entries": tuple(c["entries"])}) for c in data["operations"]
        ),
        refused=tuple(Refusal(**r) for r in data["refused"]),
        model_calls=data["model_calls"],
        note=data["note"],
        fingerprint=data["fingerprint"],
        reverted_at=data["reverted_at"],
        revert=tuple(FileChange(**f) for f in data["revert"]),
    )
