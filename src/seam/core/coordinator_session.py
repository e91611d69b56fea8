"""What the Coordinator needs of the session a claim runs in.

A protocol rather than the `SessionFactory`'s `Session`, so the Coordinator (and its
mixins) import nothing of the factory that builds sessions: the factory depends on the
Coordinator (it submits through it), never the other way round. `Session` is the one
implementation; a test may hand the Coordinator anything of this shape.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Protocol, TypedDict, Unpack

from seam.contracts.events import AgentEvent
from seam.contracts.execution import Submission
from seam.contracts.sessions import SessionInfo
from seam.contracts.tools import CancelToken
from seam.contracts.turn_extras import TurnExtras

if TYPE_CHECKING:
    from seam.core.loop import AgentLoop
    from seam.core.loop_parts import SessionTurnOptions
    from seam.core.turn import TurnStep


class ClaimSession(Protocol):
    """A session as a claim uses it: its stored spec, the loop its turns run on (for the
    redaction and the event numbering), its turns, and which of its tools may run again."""

    @property
    def info(self) -> SessionInfo: ...

    @property
    def loop(self) -> AgentLoop: ...

    def run_from(
        self, start: TurnStep, **options: Unpack[SessionTurnOptions]
    ) -> AsyncIterator[AgentEvent]: ...

    def is_idempotent(self, tool_name: str) -> bool: ...


class SubmitOptions(TypedDict, total=False):
    """`Coordinator.submit`'s keywords (and `Runtime.submit`'s): the caller's submission
    id, an idempotency key (None: a new one), the personality the turn runs as, and what
    the caller adds to the turn (its own tools, sampling settings: `TurnExtras`)."""

    submission_id: str | None
    personality: str | None
    # Kept in this process for the submission's turn (`contracts/turn_extras.py`).
    extras: TurnExtras | None


class DriveOptions(TypedDict, total=False):
    """`Coordinator.run`'s keywords (and `Runtime.drive`'s): cancelling `cancel` stops the
    turn at its next step and settles it aborted; `admitted`, the submission as `submit`
    just returned it, saves reading it again."""

    cancel: CancelToken | None
    admitted: Submission | None


# The session stored under a key (the factory's `resolve`), rebuilt after a restart.
Resolve = Callable[[str], Awaitable[ClaimSession]]
