"""The rewinder a runtime's surfaces share (`contracts/rewind.py`): built over the
runtime's store and, when `[checkpoints]` is on, the engine its undo service uses."""

from __future__ import annotations

from typing import TYPE_CHECKING

from seam.contracts.checkpoints import CheckpointLog
from seam.contracts.rewind import Rewinder
from seam.plugins.checkpoints.rewind import SessionRewinder
from seam.plugins.checkpoints.undo import UndoService

if TYPE_CHECKING:
    from seam.wiring.runtime import Runtime


def rewinder(runtime: Runtime) -> Rewinder:
    """Rewind and fork for `runtime`'s sessions (files restored only when its undo
    service, and so its checkpoints, exist)."""
    store = runtime.store
    log = store if isinstance(store, CheckpointLog) else None
    service = runtime.checkpoints
    engine = service.engine if isinstance(service, UndoService) else None
    return SessionRewinder(runtime.sessions, log, engine)


__all__ = ["rewinder"]
