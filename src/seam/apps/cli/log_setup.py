"""Process logging for surfaces: warnings to stderr, tracebacks to a file, every record as
a JSON line (what `seam logs` reads), secrets redacted on the way out; and the crash log
the CLI's backstop names."""

from __future__ import annotations

import logging
import weakref

from seam.apps.cli.json_log import JsonLinesHandler
from seam.wiring.logs import (
    JSON_LOG_KEEP,
    JSON_LOG_MAX_BYTES,
    ProcessSecrets,
    Redact,
    crash_log_folders,
    log_file,
    redacting_filter,
)

# The handlers `configure_logging` installed, so a second call installs none.
_INSTALLED: weakref.WeakSet[logging.Handler] = weakref.WeakSet()


def configure_logging(
    level: int = logging.WARNING,
    *,
    redact: Redact | None = None,
    json_level: int = logging.INFO,
    max_bytes: int = JSON_LOG_MAX_BYTES,
    keep: int = JSON_LOG_KEEP,
    surface: str = "cli",
) -> None:
    """One stderr handler on the root logger; the filter sits on the handler so records
    from every child logger pass through it. It redacts with `redact`, by default the
    patterns plus the exact secrets of the settings the environment describes. stderr gets
    one line per warning; a record with a traceback goes only to `$SEAM_HOME/logs/seam.log`
    (`log_file()`), so a fault the CLI reports in its own line is not buried under a stack
    dump. Each JSON line names the `surface` that wrote it (the Logs section filters by it)."""
    root = logging.getLogger()
    if any(h in _INSTALLED for h in root.handlers):
        return
    scrub = redact or ProcessSecrets()
    handler = logging.StreamHandler()
    handler.setLevel(level)
    handler.setFormatter(_OneLine("seam: %(levelname)s %(name)s: %(message)s"))
    # A record with a traceback is a failure something above reports in its own words
    # (the CLI's one line); its details belong in the file, not on the terminal.
    handler.addFilter(lambda record: record.exc_info is None)
    details = _QuietFileHandler()
    details.setLevel(logging.ERROR)
    details.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    # Every record at `json_level` and above, one redacted JSON object a line, rotated:
    # what `seam logs` reads.
    lines = JsonLinesHandler(max_bytes=max_bytes, keep=keep, surface=surface)
    lines.setLevel(json_level)
    for each in (handler, details, lines):
        each.addFilter(redacting_filter(scrub))
        _INSTALLED.add(each)
        root.addHandler(each)
    root.setLevel(min(root.level or level, level, json_level))


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


def write_crash_log(exc: BaseException) -> str | None:
    """Write `exc`'s traceback to `$SEAM_HOME/logs/crash-<time>-<pid>.log` (the system
    temp dir when SEAM_HOME cannot take it: read-only, full) and return the path, or None
    when no file could be written anywhere. The CLI's backstop names it in its one line."""
    import os
    import time
    import traceback

    text = ProcessSecrets()("".join(traceback.format_exception(exc)))
    name = f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    folders = crash_log_folders()
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
