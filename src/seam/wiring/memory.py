"""The markdown memory the settings describe: `$SEAM_HOME/memory/`, shared by every
personality (USER.md is about the person, whoever the agent is being)."""

from __future__ import annotations

from seam.contracts.memory import MemoryEntryError, MemoryUsage
from seam.plugins.memory.markdown import FILES, TARGETS, MarkdownMemory, Target
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
    return MarkdownMemory(settings.home / "memory")
