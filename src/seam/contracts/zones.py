"""`time_zone`: an IANA time zone by name, or one line saying there is none.

Cron schedules and do-not-disturb rules both take a zone from a person ("Europe/Berlin")
and must refuse a misspelt one with the same sentence; each raises its own error type.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def time_zone(name: str, error: type[ValueError] = ValueError) -> ZoneInfo:
    """The zone `name`; `error` (a ValueError) naming it when no such zone exists."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise error(f"unknown time zone {name!r} (use an IANA name like Europe/Berlin)") from None
