"""The markdown memory the settings describe: `$SEAM_HOME/memory/`, shared by every
personality (USER.md is about the person, whoever the agent is being)."""

from __future__ import annotations

from seam.contracts.memory import MemoryEntryError, MemoryUsage
from seam.plugins.memory.markdown import FILES, TARGETS, MarkdownMemory, Target
from seam.plugins.safety import injection, redact
from seam.wiring.settings import Settings

__all__ = [
    "FILES",
    "TARGETS",
    "MarkdownMemory",
    "MemoryEntryError",
    "MemoryUsage",
    "Target",
    "build_memory",
]


def build_memory(settings: Settings) -> MarkdownMemory:
    """Memory refuses entries that read like injections or hold secrets, whoever writes
    them: the safety scanners are handed in here."""
    return MarkdownMemory(settings.home / "memory", scanner=injection, redactor=redact)
