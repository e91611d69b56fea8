"""Submissions a full disk kept from settling, settled failed once there is room again.

When the disk is full the store cannot record that a turn failed: the submission stays
queued or running, and without help the next `seam resume` would run it again (and, with
the disk still full, fail again, forever). So the CLI notes it in `unsettled.json`, a
file in SEAM_HOME reserved at its full size while there is room: overwriting bytes it
already owns needs no free space. The next command that opens the runtime settles every
noted submission failed with the reason, instead of running it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from seam.contracts.execution import ClaimScope, Settlement

if TYPE_CHECKING:
    from seam.wiring.runtime import Runtime

log = logging.getLogger(__name__)

NOTE_FILE = "unsettled.json"
NOTE_SIZE = 4096


def _path(runtime: Runtime) -> Path | None:
    settings = runtime.settings
    return settings.home / NOTE_FILE if settings is not None else None


def reserve(runtime: Runtime) -> None:
    """Create the note file at its full size, while the disk has room (best effort)."""
    path = _path(runtime)
    if path is None or path.exists():
        return
    try:
        with path.open("xb") as out:
            out.write(b" " * NOTE_SIZE)
    except OSError:
        pass


def _read(path: Path) -> dict[str, dict[str, str]]:
    try:
        text = path.read_bytes().decode("utf-8").strip()
        found = json.loads(text) if text else {}
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _write(path: Path, notes: dict[str, dict[str, str]]) -> bool:
    """Overwrite the reserved bytes in place (no new space needed); False if it failed."""
    data = json.dumps(notes, ensure_ascii=True).encode()
    while len(data) > NOTE_SIZE and notes:
        notes.pop(next(iter(notes)))  # the oldest note goes first
        data = json.dumps(notes, ensure_ascii=True).encode()
    try:
        with path.open("r+b") as out:
            out.write(data.ljust(NOTE_SIZE))
    except OSError:
        return False
    return True


def remember(runtime: Runtime, submission_id: str, reason: str) -> bool:
    """Note that `submission_id` (run by this process) could not settle: `reason`."""
    path = _path(runtime)
    if path is None or not path.exists():
        return False
    notes = _read(path)
    notes[submission_id] = {"owner": runtime.owner, "reason": reason}
    return _write(path, notes)


async def settle_remembered(runtime: Runtime) -> None:
    """Settle every noted submission failed with its reason; keep the notes that still
    cannot be written (the disk is still full) for the next time."""
    path = _path(runtime)
    if path is None or not path.exists():
        return
    notes = _read(path)
    if not notes:
        return
    store = runtime.store
    left: dict[str, dict[str, str]] = {}
    for sid, note in notes.items():
        reason = str(note.get("reason", "the disk was full"))
        try:
            sub = await store.submission(sid)
            if sub is None or sub.state == "settled":
                continue
            claimed = await store.claim(
                runtime.owner,
                scope=ClaimScope(submission_id=sid, dead_owners=[str(note.get("owner", ""))]),
            )
            if claimed is None:  # someone alive holds it (or it waits behind another)
                left[sid] = note
                continue
            await store.settle(
                sid, runtime.owner, Settlement("failed", error=reason, finish_reason="error")
            )
        except Exception:
            log.warning("could not settle %s yet (%s)", sid, reason)
            left[sid] = note
    _write(path, left)


__all__ = ["remember", "reserve", "settle_remembered"]
