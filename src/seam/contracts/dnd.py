"""Quiet hours: when Seam holds back what it would otherwise deliver unasked.

Rules are time windows on chosen weekdays in a time zone (`22:00-07:00` Mon-Fri,
Europe/Berlin; a window may cross midnight), plus an indefinite toggle (`seam dnd on`).
Deliveries due while quiet wait until `quiet_until`; urgent ones go through.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class DndRule:
    start: str  # "HH:MM", local time in `tz`
    end: str  # "HH:MM"; earlier than start means the window crosses midnight
    weekdays: tuple[int, ...] = (0, 1, 2, 3, 4, 5, 6)  # Monday = 0, of the day the window starts
    tz: str = "UTC"  # an IANA zone name


@runtime_checkable
class DndChecker(Protocol):
    async def quiet_until(self, now: float) -> float | None:
        """None when deliveries may go out at `now`; else when the quiet period ends
        (`math.inf` while the indefinite toggle is on)."""
        ...

    async def is_quiet_now(self, now: float) -> bool: ...

    async def list_active(self, now: float) -> Sequence[DndRule]: ...

    async def add_rule(self, rule: DndRule) -> None: ...

    async def toggle_indefinite(self, on: bool) -> None: ...

    async def remove_all(self) -> None: ...
