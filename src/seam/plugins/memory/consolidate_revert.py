"""Undoing a consolidation run: `seam memory revert ID`.

A file that still holds exactly what the run left gets its text from before the run
back, byte for byte. A file edited since is merged entry by entry: the entries the run
took out come back, the entries it wrote go, and what was added or removed since stays
added or removed. When an entry the run wrote is no longer there as written (edited or
removed since, or merged again by a later run), nobody can say what undoing means, and
the revert is refused, naming that entry; nothing is written. A revert writes every
file or none, and is recorded in the run's record, so a second revert says it was done.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from seam.plugins.memory.consolidate import Consolidator, MemoryFile
from seam.plugins.memory.consolidate_record import FileChange, RunRecord
from seam.plugins.memory.markdown import _cut, atomic_write, parse_entries, render_entries


class RevertRefused(ValueError):
    """A revert that cannot be made; the message says why, in one line."""


def revert(consolidator: Consolidator, run_id: str) -> RunRecord:
    """Undo run `run_id` (an id or its unique start); returns its updated record."""
    with consolidator.lock():
        record = find(consolidator, run_id)
        if record.reverted_at is not None:
            when = datetime.fromtimestamp(record.reverted_at, UTC).strftime("%Y-%m-%d %H:%M:%SZ")
            raise RevertRefused(f"run {record.id} was already reverted at {when}")
        if not record.changed:
            raise RevertRefused(f"run {record.id} changed no file: there is nothing to revert")
        files = {f.name: f for f in consolidator.files()}
        plans: list[tuple[MemoryFile, FileChange]] = []
        for change in record.changed:
            file = files.get(change.name)
            if file is None:
                raise RevertRefused(f"{change.name} is no longer a memory file here")
            current = file.read()
            undone = restored(record, change, current)
            plans.append((file, FileChange(change.name, current, undone)))
        for file, plan in plans:
            atomic_write(file.path, plan.after)
        updated = dataclasses.replace(
            record, reverted_at=consolidator.clock(), revert=tuple(plan for _, plan in plans)
        )
        consolidator.book.save(updated)
    return updated


def find(consolidator: Consolidator, run_id: str) -> RunRecord:
    record = consolidator.book.load(run_id.strip())
    if record is None:
        raise RevertRefused(f"no consolidation run {run_id!r} (see: seam memory history)")
    return record


def restored(record: RunRecord, change: FileChange, current: str) -> str:
    """The file's text with `change` undone, given what it holds now (`current`)."""
    if current == change.after:
        return change.before
    before, after, now = (parse_entries(t) for t in (change.before, change.after, current))
    written = [entry for entry in after if entry not in before]
    gone = [entry for entry in written if entry not in now]
    if gone:
        raise RevertRefused(
            f"{change.name} changed since run {record.id}: the entry {_cut(gone[0])!r} it wrote "
            "is no longer there as written; revert later runs first, or fix it by hand "
            "(seam memory edit)"
        )
    removed_since = {entry for entry in after if entry not in now}
    added_since = [entry for entry in now if entry not in after and entry not in before]
    kept = [entry for entry in before if entry not in removed_since]
    return render_entries(kept + added_since)
