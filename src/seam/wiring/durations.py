"""Durations as the config file writes them (`30m`, `24h`, `7d`): one parser for every
section that takes one (`[sessions] idle_end`, `[heartbeat] every`, the gateway's
`alert_after`), in a module of its own so section models can use it without importing
`settings.py`, which imports them.
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_SECONDS_PER_UNIT = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


def parse_duration(text: str) -> float:
    """`90s`, `30m`, `24h`, `7d`, `2w` as seconds; "" or "0" is 0 (off)."""
    text = text.strip().lower()
    if text in ("", "0"):
        return 0.0
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"must be a duration like 30m, 24h or 7d, got {text!r}")
    return float(match.group(1)) * _SECONDS_PER_UNIT[match.group(2)]
