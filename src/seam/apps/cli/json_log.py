"""The structured log, `$SEAM_HOME/logs/seam.jsonl`: one JSON object per record, rotated
by size. `seam logs` reads it back (logs.py)."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from pathlib import Path
from typing import BinaryIO

from seam.wiring.logs import JSON_LOG_KEEP, JSON_LOG_MAX_BYTES, json_log_file, log_fields


def _trace_ids() -> tuple[str, str] | None:
    """The current OpenTelemetry span's trace and span ids, when tracing is on (it never
    is before something imported the tracing API: no import here for a log line)."""
    if "opentelemetry.trace" not in sys.modules:
        return None
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, the surface that wrote it
    (cli, web, gateway, acp, worker: what the Control UI's Logs section filters by), the
    trace and span id when in a span, the session and submission when in a turn, and the
    traceback."""

    def __init__(self, surface: str | None = None) -> None:
        super().__init__()
        self.surface = surface

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if self.surface:
            line["surface"] = self.surface
        ids = _trace_ids()
        if ids is not None:
            line["trace_id"], line["span_id"] = ids
        for key, value in log_fields().items():
            line.setdefault(key, value)
        for key in ("session", "submission"):
            given = record.__dict__.get(key)
            if isinstance(given, str):
                line[key] = given
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exc"] = record.exc_text
        return json.dumps(line, ensure_ascii=False)


class JsonLinesHandler(logging.Handler):
    """Appends JSON lines to `json_log_file()`, rotating by size (`keep` older files).
    The path is resolved per record (SEAM_HOME may change under a test); a log that
    cannot be written (a read-only or full SEAM_HOME) is skipped silently."""

    def __init__(
        self,
        *,
        max_bytes: int = JSON_LOG_MAX_BYTES,
        keep: int = JSON_LOG_KEEP,
        surface: str | None = None,
    ):
        super().__init__()
        self.max_bytes = max_bytes
        self.keep = keep
        self._file: RotatingLines | None = None
        self.setFormatter(JsonFormatter(surface))

    def _target(self) -> RotatingLines:
        path = json_log_file()
        if self._file is None or path != self._file.path:
            if self._file is not None:
                self._file.close()
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = RotatingLines(path, self.max_bytes, self.keep)
        return self._file

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self._target().write(self.format(record))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        super().close()


class RotatingLines:
    """The file half of `logging.handlers.RotatingFileHandler`, which is not imported for
    it: that module (with pickle and socket handlers beside it) costs every one-shot that
    logs a line half a MiB. Appends a line; when it would take the file to `max_bytes`,
    first shifts `<path>.N` to `<path>.N+1` (dropping the oldest, `keep` kept) and the
    file to `<path>.1`. Callers hold the handler's lock (`logging.Handler.handle`)."""

    def __init__(self, path: Path, max_bytes: int, keep: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.keep = keep
        self._stream: BinaryIO | None = None

    def write(self, line: str) -> None:
        data = (line + "\n").encode("utf-8")
        stream = self._stream or self._open()
        if self.keep > 0 and self.max_bytes > 0 and stream.tell() + len(data) >= self.max_bytes:
            stream = self._rotate()
        stream.write(data)
        stream.flush()

    def _open(self) -> BinaryIO:
        self._stream = open(self.path, "ab")  # noqa: SIM115 (kept open between records)
        return self._stream

    def _rotate(self) -> BinaryIO:
        self.close()
        for n in range(self.keep - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{n}")
            if older.exists():
                older.replace(self.path.with_name(f"{self.path.name}.{n + 1}"))
        if self.path.exists():
            self.path.replace(self.path.with_name(f"{self.path.name}.1"))
        return self._open()

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
