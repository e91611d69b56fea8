"""A personality's files checked before they are written: loaded from a scratch folder by
the same registry that loads them for real, so an edit is refused exactly as a start-up
would refuse it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from seam.plugins.personalities.files import FilePersonalityRegistry


def personality_problem(pid: str, soul: str, config: str) -> str | None:
    """What is wrong with these files as personality `pid`, as loading them would say."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / pid
        try:
            folder.mkdir()
        except OSError:
            return f"{pid!r} is not a valid personality id"
        (folder / "SOUL.md").write_text(soul, encoding="utf-8")
        if config.strip():
            (folder / "config.toml").write_text(config, encoding="utf-8")
        try:
            FilePersonalityRegistry(scratch).get(pid)
        except KeyError as exc:
            message = str(exc.args[0] if exc.args else exc)
            return message.replace(scratch + "/", "").replace(scratch, "")
    return None


__all__ = ["personality_problem"]
