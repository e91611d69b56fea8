"""Process logging for surfaces: warnings to stderr, secrets redacted on the way out."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

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


def configure_logging(level: int = logging.WARNING, *, redact: Redact | None = None) -> None:
    """One stderr handler on the root logger; the filter sits on the handler so records
    from every child logger pass through it. It redacts with `redact`, by default the
    patterns plus the exact secrets of the settings the environment describes."""
    root = logging.getLogger()
    if any(getattr(h, "_seam", False) for h in root.handlers):
        return
    handler = logging.StreamHandler()
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter("seam: %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter(redact or _ProcessSecrets()))
    handler._seam = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(min(root.level or level, level))
