"""Process logging for surfaces: warnings to stderr, secrets redacted on the way out."""

from __future__ import annotations

import logging

from seam.plugins.safety.redact import RedactingFilter


def configure_logging(level: int = logging.WARNING) -> None:
    """One stderr handler on the root logger; the filter sits on the handler so records
    from every child logger pass through it."""
    root = logging.getLogger()
    if any(getattr(h, "_seam", False) for h in root.handlers):
        return
    handler = logging.StreamHandler()
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter("seam: %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())
    handler._seam = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(min(root.level or level, level))
