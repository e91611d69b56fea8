"""What the Logs section reads: the structured log's last lines that pass a filter, and the
new ones as Server-Sent Events while the page listens.

The parsing, the filter and the tail are `seam logs`'s own (`apps/cli/logs.py`), so the
page and the terminal show the same lines. The log is redacted when written; each field
shown is passed through the home's redactor again on the way out, so a secret that a
line kept from before it was configured is still not shown.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from seam.apps.cli.logs import (
    POLL_SECONDS,
    LogFilter,
    follow_lines,
    log_files,
    parse,
    public_name,
    read_lines,
)

Redact = Callable[[str], str]

# Text fields a record may carry; each is redacted and bounded before it is sent.
TEXT_FIELDS = ("message", "exc", "logger", "session", "submission", "surface", "level")
MAX_FIELD = 20_000
# A comment line this often keeps proxies from closing an idle stream.
HEARTBEAT_SECONDS = 15.0
# At most this many lines a stream event: a burst of writes is sent in pieces.
BATCH = 200


def shown(line: dict[str, Any], scrub: Redact) -> dict[str, Any]:
    """The fields of one record the page shows: the known ones, redacted and bounded, plus
    the session's public name for display."""
    out: dict[str, Any] = {}
    ts = line.get("ts")
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        out["ts"] = float(ts)
    for key in (*TEXT_FIELDS, "trace_id", "span_id"):
        value = line.get(key)
        if isinstance(value, str):
            out[key] = scrub(value[:MAX_FIELD])
    if "session" in out:
        out["session_name"] = public_name(out["session"])
    return out


def last_lines(current: Path, keep: LogFilter, limit: int) -> list[dict[str, Any]]:
    """The last `limit` records of the log (rotated files too) that `keep` keeps, oldest
    first. Blocking: run it in a thread."""
    found: deque[dict[str, Any]] = deque(maxlen=limit)
    for raw in read_lines(log_files(current)):
        line = parse(raw)
        if line is not None and keep.keeps(line):
            found.append(line)
    return list(found)


def sse(event: str, data: object) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


async def stream_lines(
    current: Path, keep: LogFilter, scrub: Redact, *, poll: float = POLL_SECONDS
) -> AsyncIterator[bytes]:
    """`ready` once the tail is at the end of the log, then a `lines` event per batch of
    new records that `keep` keeps, and a heartbeat comment when idle. Ends when the client
    goes (the server stops iterating)."""
    ready = False
    quiet_since = time.monotonic()
    async for batch in follow_lines(current, from_end=True, poll=poll):
        if not ready:
            ready = True
            yield sse("ready", {"path": current.name})
        kept = [shown(line, scrub) for line in map(parse, batch) if line and keep.keeps(line)]
        for start in range(0, len(kept), BATCH):
            yield sse("lines", kept[start : start + BATCH])
            quiet_since = time.monotonic()
        if time.monotonic() - quiet_since >= HEARTBEAT_SECONDS:
            quiet_since = time.monotonic()
            yield b": heartbeat\n\n"
        await asyncio.sleep(0)  # a long burst still lets the loop serve others


__all__ = ["last_lines", "shown", "stream_lines"]
