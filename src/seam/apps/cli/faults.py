"""Faults of the environment, each as one line that says what is wrong and what to do.

A read-only or full `SEAM_HOME`, a session database another process holds locked or one
that is damaged: none of these is a bug in seam, so none of them should end in a
traceback. `describe` turns the exception into `(message, exit code)`; anything it does
not recognise is left to the CLI's backstop (one line naming a crash log).
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from seam.apps.cli.exits import FAILURE

_FULL = (errno.ENOSPC, errno.EDQUOT)
_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


def describe(exc: BaseException) -> tuple[str, int] | None:
    """The one line (and exit code) for an environment fault, or None for anything else."""
    if isinstance(exc, sqlite3.Error):
        return _database(exc), FAILURE
    if isinstance(exc, OSError):
        return _os_error(exc), FAILURE
    schema = _schema_too_new(exc)
    if schema is not None:
        return schema, FAILURE
    return None


def is_disk_full(exc: BaseException) -> bool:
    """Whether `exc` says the disk is full (SQLite reports some of those as I/O errors)."""
    if isinstance(exc, OSError):
        return exc.errno in _FULL
    if isinstance(exc, sqlite3.Error):
        text = str(exc).lower()
        if "full" in text:
            return True
        if "disk i/o" in text:
            _, db = _locations()
            return _no_room(db.parent)
    return False


def stored_failure(error: str | None) -> str | None:
    """The line for a submission the store settled failed because of the environment
    (it holds the exception's repr, e.g. "crashed: OperationalError('database or disk
    is full')"), or None when the failure was something else."""
    if not error or not error.startswith("crashed: "):
        return None
    text = error.lower()
    if "disk is full" in text or "no space left" in text:
        _, db = _locations()
        return _full(str(db))
    return None


def _no_room(folder: Path) -> bool:
    import shutil

    try:
        return shutil.disk_usage(folder).free < 64 * 1024
    except OSError:
        return False


def _database(exc: sqlite3.Error) -> str:
    home, db = _locations()
    said = str(exc)
    text = said.lower()
    if "locked" in text or "busy" in text:
        return (
            f"the session database {db} is locked by another process (is another seam"
            " running a turn or a migration?); wait for it to finish or stop it, then try again"
        )
    if "full" in text or ("disk i/o" in text and _no_room(db.parent)):
        return _full(str(db))
    if "readonly" in text or "read-only" in text:
        return _read_only(str(db), home, said)
    if "unable to open" in text:
        return (
            f"cannot open the session database {db} ({said}); check that {db.parent} exists"
            f" and is writable, or point SEAM_HOME at a writable directory"
        )
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return (
            f"the session database {db} is damaged ({said}); nothing was changed. Move it"
            f" aside to start afresh (mv {db} {db}.broken) or restore it from a backup"
        )
    if "disk i/o" in text:
        return f"the disk holding {db} failed to read or write ({said}); check the disk"
    return f"the session database {db} failed: {said}"


def _os_error(exc: OSError) -> str:
    home, _ = _locations()
    where = str(exc.filename) if exc.filename else str(home)
    if exc.errno in _FULL:
        return _full(where)
    if exc.errno in _READ_ONLY:
        return _read_only(where, home, exc.strerror or str(exc))
    return f"{where}: {exc.strerror or exc}"


def _full(where: str) -> str:
    return (
        f"the disk holding {where} is full; nothing more was saved. Free some space (seam"
        " sessions prune --older-than 30d deletes old ended sessions), then try again"
    )


def _read_only(where: str, home: Path, said: str) -> str:
    return (
        f"cannot write {where} ({said}); seam keeps its config and sessions in SEAM_HOME"
        f" ({home}): make it writable, or point SEAM_HOME at a writable directory"
    )


def _schema_too_new(exc: BaseException) -> str | None:
    from seam.contracts.db import SchemaTooNew

    if isinstance(exc, SchemaTooNew):
        return f"{exc}; upgrade seam to use this database"
    return None


def _locations() -> tuple[Path, Path]:
    """SEAM_HOME and the session database file, as the settings would name them (the
    defaults when the settings themselves cannot be read)."""
    from seam.wiring.settings import home_from_environment, load_settings

    try:
        settings = load_settings()
    except Exception:
        home = home_from_environment()
        return home, home / "sessions.db"
    return settings.home, settings.store_path


__all__ = ["describe"]
