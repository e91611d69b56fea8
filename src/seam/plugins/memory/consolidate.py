"""Memory consolidation: merge duplicate entries, drop the ones a newer entry
contradicts, keep each file within its limit, and record every change so it can be
shown and undone.

Per file (MEMORY.md, USER.md, and each tenant's own), in this order:
1. exact and normalised duplicates of a newer entry go, no model asked
   (consolidate_find.py);
2. the model is shown the rest, numbered, with the groups found close in meaning, and
   answers in a strict JSON protocol (consolidate_protocol.py); its answer is applied
   only when every operation in it holds, else refused whole, logged and recorded;
3. the file is written atomically, unless it changed while the model thought (then it
   is left for the next run).
Every run leaves one record (consolidate_record.py), also a run that changed nothing.

A scheduled run (`skip_unchanged`) asks the model about no file whose text is the same
as the last run left it: when no file changed, the run makes no model call at all and
its record says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from seam.contracts.memory import MemoryTarget
from seam.contracts.model import ModelProvider, TextChunk
from seam.contracts.recall import Embedder
from seam.plugins.memory.consolidate_find import dedupe, near_duplicates
from seam.plugins.memory.consolidate_protocol import (
    FileView,
    ModelOp,
    Refused,
    apply,
    parse,
    request,
    validate,
)
from seam.plugins.memory.consolidate_record import (
    Change,
    FileChange,
    RecordBook,
    Refusal,
    RunRecord,
    fingerprint,
    new_id,
)
from seam.plugins.memory.markdown import (
    MarkdownMemory,
    atomic_write,
    parse_entries,
    render_entries,
    used_chars,
)

log = logging.getLogger("seam.memory.consolidate")

# Seconds one model answer may take.
MODEL_TIMEOUT = 120.0
# How a refusal for a model that gave no answer starts (a failed run, not a refused answer).
MODEL_FAILED = "the model failed"


class ConsolidationBusy(RuntimeError):
    """Another consolidation (or revert) holds the lock."""


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """One file consolidation looks after: its name relative to SEAM_HOME, the memory
    whose rules it follows, and which of its two files it is."""

    name: str
    memory: MarkdownMemory
    target: MemoryTarget

    @property
    def path(self) -> Path:
        return self.memory.path(self.target)

    def read(self) -> str:
        """The text as stored, line ends and all (so a revert restores it byte for byte)."""
        try:
            with self.path.open(encoding="utf-8", newline="") as file:
                return file.read()
        except FileNotFoundError:
            return ""


@dataclass
class _Context:
    """What one run knows before it reads a file: each file's text as the last run left
    it (only for a run that skips unchanged files), where the records are, and whether to
    write. `vetoes`, the changes a person reverted (never made again), are read from the
    records only when the model is asked: an idle run reads one record, not all."""

    previous: Mapping[str, str]
    book: RecordBook
    dry_run: bool

    @functools.cached_property
    def vetoes(self) -> dict[tuple[str, frozenset[str]], str]:
        return vetoes(self.book.all())


@dataclass
class _Outcome:
    change: FileChange
    operations: list[Change] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    model_calls: int = 0


@dataclass
class Consolidator:
    """Consolidates `files()` (read anew each run: tenants come and go), asking `model`
    and finding near duplicates with `embedder()` (None: exact duplicates only)."""

    files: Callable[[], Sequence[MemoryFile]]
    model: ModelProvider
    embedder: Callable[[], Embedder | None]
    book: RecordBook
    clock: Callable[[], float] = time.time
    timeout: float = MODEL_TIMEOUT

    async def run(
        self, trigger: str = "manual", *, dry_run: bool = False, skip_unchanged: bool = False
    ) -> RunRecord:
        """One run; with `dry_run` nothing is written (no file, no record)."""
        with self.lock(dry_run):
            last = self.book.last()
            previous = last_texts(last) if skip_unchanged and last is not None else {}
            context = _Context(previous, self.book, dry_run)
            outcomes = [await self._file(f, context) for f in self.files()]
            files = tuple(o.change for o in outcomes)
            calls = sum(o.model_calls for o in outcomes)
            idle = (
                last is not None
                and skip_unchanged
                and all(previous.get(f.name) == f.before for f in files)
            )
            record = RunRecord(
                id=new_id(self.clock(), self.book.ids()),
                time=self.clock(),
                trigger=trigger,
                files=files,
                operations=tuple(c for o in outcomes for c in o.operations),
                refused=tuple(r for o in outcomes for r in o.refused),
                model_calls=calls,
                note=f"no memory change since run {last.id}: no model call"
                if idle and last is not None
                else "",
                fingerprint=fingerprint((f.name, f.after) for f in files),
            )
            if not dry_run:
                self.book.save(record)
        return record

    @contextlib.contextmanager
    def lock(self, dry_run: bool = False) -> Iterator[None]:
        """One consolidation or revert at a time over these files, across processes."""
        if dry_run:
            yield
            return
        self.book.folder.mkdir(parents=True, exist_ok=True)
        with (self.book.folder / ".lock").open("a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ConsolidationBusy("another memory consolidation is running") from None
            yield

    async def _file(self, file: MemoryFile, context: _Context) -> _Outcome:
        before = file.read()
        found = dedupe(parse_entries(before))
        outcome = _Outcome(FileChange(file.name, before, before))
        outcome.operations = [
            Change(file.name, "dedupe", (old,), keep, "the same words as a newer entry")
            for old, keep in found.removed
        ]
        entries = found.kept
        if context.previous.get(file.name) != before:
            entries = await self._judged(file, entries, outcome, context.vetoes)
            _note_over_limit(file, entries, outcome)
        if not outcome.operations:
            return outcome
        after = render_entries(entries)
        outcome.change = FileChange(file.name, before, after)
        if not context.dry_run and not self._write(file, before, after):
            outcome.refused.append(Refusal(file.name, "the file changed during the run"))
            outcome.operations = []
            outcome.change = FileChange(file.name, before, before)
        return outcome

    async def _judged(
        self,
        file: MemoryFile,
        entries: list[str],
        outcome: _Outcome,
        vetoed: Mapping[tuple[str, frozenset[str]], str],
    ) -> list[str]:
        """`entries` after the model's checked answer (as they are when it is refused)."""
        limit = file.memory.limits[file.target]
        over_by = max(0, used_chars(entries) - limit)
        if len(entries) < 2 and not over_by:
            return entries
        groups = await near_duplicates(entries, self.embedder())
        view = FileView(file.name, entries, limit, over_by, groups)
        outcome.model_calls += 1
        try:
            answer = await self._ask(view)
        except Exception as exc:  # no answer (down, no key, timeout): the file stays
            return _refuse(outcome, entries, f"{MODEL_FAILED}: {exc or type(exc).__name__}")
        try:
            checked = validate(view, parse(answer), _checker(file))
        except Refused as exc:
            return _refuse(outcome, entries, f"the answer is refused: {exc}")
        made: list[ModelOp] = []
        for op in checked:
            change = _change(file.name, entries, op)
            reverted = vetoed.get(veto_key(change))
            if reverted is None:
                made.append(op)
                outcome.operations.append(change)
            else:
                why = f"not made again: a person reverted the same {op.op} (run {reverted})"
                outcome.refused.append(Refusal(file.name, why))
        return apply(entries, made)

    async def _ask(self, view: FileView) -> str:
        parts: list[str] = []
        async with asyncio.timeout(self.timeout):
            async for chunk in self.model.stream(request(view)):
                if isinstance(chunk, TextChunk):
                    parts.append(chunk.text)
        return "".join(parts)

    def _write(self, file: MemoryFile, before: str, after: str) -> bool:
        """Write `after` unless the file no longer holds `before` (a write meanwhile)."""
        if file.read() != before:
            return False
        atomic_write(file.path, after)
        return True


def _note_over_limit(file: MemoryFile, entries: list[str], outcome: _Outcome) -> None:
    """A file still over its limit says so: nothing is ever dropped just to make room."""
    limit = file.memory.limits[file.target]
    over = used_chars(entries) - limit
    if over > 0:
        why = f"still {over:,} chars over its limit of {limit:,}: no entry is dropped to make room"
        outcome.refused.append(Refusal(file.name, why))


def _refuse(outcome: _Outcome, entries: list[str], reason: str) -> list[str]:
    """Log and record why the model changes nothing in the file; `entries` unchanged."""
    name = outcome.change.name
    log.info("memory consolidation of %s: %s", name, reason)
    outcome.refused.append(Refusal(name, reason))
    return entries


def _checker(file: MemoryFile) -> Callable[[str], str]:
    """The memory's own check of a new entry (injection, secrets, size)."""

    def check(text: str) -> str:
        return file.memory.checked_entry(file.target, text)

    return check


def _change(name: str, entries: Sequence[str], op: ModelOp) -> Change:
    taken = tuple(entries[i - 1] for i in op.ids)
    reason = op.reason
    if op.newer is not None:
        reason = f"{reason} (newer entry: {entries[op.newer - 1]!r})"
    return Change(name, op.op, taken, op.text, reason)


def last_texts(record: RunRecord) -> dict[str, str]:
    """Each file's text as the last run (or its revert) left it."""
    texts = {f.name: f.after for f in record.files}
    texts.update({f.name: f.after for f in record.revert})
    return texts


def veto_key(change: Change) -> tuple[str, frozenset[str]]:
    return (change.op, frozenset(change.entries))


def vetoes(records: Sequence[RunRecord]) -> dict[tuple[str, frozenset[str]], str]:
    """The model's changes in reverted runs (a dedupe is always made again)."""
    return {
        veto_key(change): record.id
        for record in records
        if record.reverted_at is not None
        for change in record.operations
        if change.op != "dedupe"
    }
