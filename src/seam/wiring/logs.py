"""Process logging for surfaces: warnings to stderr, secrets redacted on the way out."""

from __future__ import annotations

import contextlib
import logging
import os
import weakref
from collections.abc import Callable
from pathlib import Path

from seam.plugins.safety.redact import RedactingFilter

Redact = Callable[[str], str]


class _ProcessSecrets:
    """The redactor for this process's own secrets, built when the first record arrives:
    most commands log nothing, and none should pay for compiling it at start-up."""

    def __init__(self) -> None:
        self._redact: Redact | None = None

    def __call__(self, text: str) -> str:
        if self._redact is None:
            from seam.plugins.safety.redact import redact
            from seam.wiring.secrets import redactor_for_env

            self._redact = redact  # a record logged while building is still redacted
            self._redact = redactor_for_env(os.environ)
        return self._redact(text)


# `$SEAM_HOME/logs/seam.jsonl` is rotated at this size, keeping this many older files
# (seam.jsonl.1 the newest of them).
JSON_LOG_MAX_BYTES = 5_000_000
JSON_LOG_KEEP = 5
JSON_LOG_NAME = "seam.jsonl"


# The handlers `configure_logging` installed, so a second call installs none.
_INSTALLED: weakref.WeakSet[logging.Handler] = weakref.WeakSet()


def configure_logging(
    level: int = logging.WARNING,
    *,
    redact: Redact | None = None,
    json_level: int = logging.INFO,
    max_bytes: int = JSON_LOG_MAX_BYTES,
    keep: int = JSON_LOG_KEEP,
) -> None:
    """One stderr handler on the root logger; the filter sits on the handler so records
    from every child logger pass through it. It redacts with `redact`, by default the
    patterns plus the exact secrets of the settings the environment describes. stderr gets
    one line per warning; a record with a traceback goes only to `$SEAM_HOME/logs/seam.log`
    (`log_file()`), so a fault the CLI reports in its own line is not buried under a stack
    dump."""
    root = logging.getLogger()
    if any(h in _INSTALLED for h in root.handlers):
        return
    handler = logging.StreamHandler()
    handler.setLevel(level)
    scrub = redact or _ProcessSecrets()
    handler.setFormatter(_OneLine("seam: %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter(scrub))
    # A record with a traceback is a failure something above reports in its own words
    # (the CLI's one line); its details belong in the file, not on the terminal.
    handler.addFilter(lambda record: record.exc_info is None)
    _INSTALLED.add(handler)
    root.addHandler(handler)
    details = _QuietFileHandler()
    details.setLevel(logging.ERROR)
    details.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    details.addFilter(RedactingFilter(scrub))
    _INSTALLED.add(details)
    root.addHandler(details)
    # Every record at `json_level` and above, one redacted JSON object a line, rotated:
    # what `seam logs` reads.
    lines = JsonLinesHandler(max_bytes=max_bytes, keep=keep)
    lines.setLevel(json_level)
    lines.addFilter(RedactingFilter(scrub))
    _INSTALLED.add(lines)
    root.addHandler(lines)
    root.setLevel(min(root.level or level, level, json_level))


def log_file() -> Path:
    """Where tracebacks are written: `$SEAM_HOME/logs/seam.log`."""
    from seam.wiring.settings import home_from_environment

    return home_from_environment() / "logs" / "seam.log"


class _OneLine(logging.Formatter):
    """The message without its traceback (that is in the log file)."""

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text, record.stack_info
        record.exc_info = record.exc_text = record.stack_info = None
        try:
            text = super().format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved
        return " ".join(text.split())


class _QuietFileHandler(logging.Handler):
    """Appends to `log_file()`, opened per record; a log that cannot be written (a
    read-only or full SEAM_HOME: the very faults being logged) is skipped silently."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            path = log_file()
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as out:
                out.write(self.format(record) + "\n")
        except Exception:
            pass


def json_log_file() -> Path:
    """The structured log: `$SEAM_HOME/logs/seam.jsonl` (rotated beside it)."""
    return log_file().with_name(JSON_LOG_NAME)


def _trace_ids() -> tuple[str, str] | None:
    """The current OpenTelemetry span's trace and span ids, when tracing is on."""
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, the trace and span id
    when in a span, the session and submission when in a turn, and the traceback."""

    def format(self, record: logging.LogRecord) -> str:
        import json

        from seam.core.log_fields import LOG_FIELDS

        line: dict[str, object] = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        ids = _trace_ids()
        if ids is not None:
            line["trace_id"], line["span_id"] = ids
        for key, value in LOG_FIELDS.get().items():
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

    def __init__(self, *, max_bytes: int = JSON_LOG_MAX_BYTES, keep: int = JSON_LOG_KEEP):
        super().__init__()
        self.max_bytes = max_bytes
        self.keep = keep
        self._file: logging.Handler | None = None
        self._path: Path | None = None
        self.setFormatter(JsonFormatter())

    def _target(self) -> logging.Handler:
        from logging.handlers import RotatingFileHandler

        path = json_log_file()
        if self._file is None or path != self._path:
            if self._file is not None:
                self._file.close()
            path.parent.mkdir(parents=True, exist_ok=True)
            handler = RotatingFileHandler(
                path, maxBytes=self.max_bytes, backupCount=self.keep, encoding="utf-8"
            )
            handler.handleError = lambda record: None  # type: ignore[method-assign]
            handler.setFormatter(self.formatter)
            self._file, self._path = handler, path
        return self._file

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self._target().emit(record)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        super().close()


def write_crash_log(exc: BaseException) -> str | None:
    """Write `exc`'s traceback to `$SEAM_HOME/logs/crash-<time>-<pid>.log` (the system
    temp dir when SEAM_HOME cannot take it: read-only, full) and return the path, or None
    when no file could be written anywhere. The CLI's backstop names it in its one line."""
    import os
    import tempfile
    import time
    import traceback
    from pathlib import Path

    from seam.wiring.settings import home_from_environment

    text = _ProcessSecrets()("".join(traceback.format_exception(exc)))
    name = f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    try:
        home = home_from_environment()
    except (OSError, RuntimeError):  # no usable home directory
        home = None
    folders = [home / "logs"] if home is not None else []
    folders.append(Path(tempfile.gettempdir()))
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / (name if folder != folders[-1] else f"seam-{name}")
            # A new file only ("x": O_EXCL): a link planted at this name in a shared temp
            # dir is not followed.
            with path.open("x", encoding="utf-8") as out:
                out.write(text)
        except OSError:
            continue
        return str(path)
    return None
