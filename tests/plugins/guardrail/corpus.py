"""Reading the corpus files: one command a line, `## verdict` sections, `esc:` lines."""

from __future__ import annotations

import codecs
from pathlib import Path

HERE = Path(__file__).parent


def load(name: str) -> list[tuple[str, str]]:
    """(section, command) pairs; the section is the last `## ...` heading, or ""."""
    entries = []
    section = ""
    for line in (HERE / name).read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.strip() and not line.startswith("#"):
            if line.startswith("esc:"):
                line = codecs.decode(line[4:], "unicode_escape")
            entries.append((section, line))
    return entries
