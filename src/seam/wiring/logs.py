"""Where the process's logs go and what they hide: the files under `$SEAM_HOME/logs`, the
redactor for this process's own secrets, and the fields a turn adds to its records.

The handlers that write them are the CLI's (`apps/cli/log_setup.py`, `apps/cli/json_log.py`);
`seam logs` reads them (`apps/cli/logs.py`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path

Redact = Callable[[str], str]

# `$SEAM_HOME/logs/seam.jsonl` is rotated at this size, keeping this many older files
# (seam.jsonl.1 the newest of them).
JSON_LOG_MAX_BYTES = 5_000_000
JSON_LOG_KEEP = 5
JSON_LOG_NAME = "seam.jsonl"


class ProcessSecrets:
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


def redacting_filter(scrub: Redact) -> logging.Filter:
    """A handler's filter that redacts each record's message and traceback with `scrub`."""
    from seam.plugins.safety.redact import RedactingFilter

    return RedactingFilter(scrub)


def log_fields() -> Mapping[str, str]:
    """The fields the current turn adds to its records (session, submission)."""
    from seam.core.log_fields import LOG_FIELDS

    return LOG_FIELDS.get()


def log_file() -> Path:
    """Where tracebacks are written: `$SEAM_HOME/logs/seam.log`."""
    from seam.wiring.settings import home_from_environment

    return home_from_environment() / "logs" / "seam.log"


def json_log_file() -> Path:
    """The structured log: `$SEAM_HOME/logs/seam.jsonl` (rotated beside it)."""
    return log_file().with_name(JSON_LOG_NAME)


def crash_log_folders() -> list[Path]:
    """Where a crash log may go, in order: `$SEAM_HOME/logs`, then the system temp dir
    (for when the home cannot take it: read-only, full, or no home directory at all)."""
    import tempfile

    from seam.wiring.settings import home_from_environment

    try:
        folders = [home_from_environment() / "logs"]
    except (OSError, RuntimeError):  # no usable home directory
        folders = []
    return [*folders, Path(tempfile.gettempdir())]
