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


def write_crash_log(exc: BaseException) -> str | None:
    """Write `exc`'s traceback to `$SEAM_HOME/logs/crash-<time>-<pid>.log` (the system
    temp dir when SEAM_HOME cannot take it: read-only, full) and return the path, or None
    when no file could be written anywhere. The CLI's backstop names it in its one line."""
    import os
    import tempfile
    import time
    import traceback
    from pathlib import Path

    from seam.plugins.safety.redact import redact
    from seam.wiring.settings import home_from_environment

    text = redact("".join(traceback.format_exception(exc)))
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
            path.write_text(text, encoding="utf-8")
        except OSError:
            continue
        return str(path)
    return None
