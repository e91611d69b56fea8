"""Code in Markdown, as the Slack and Discord converters both handle it.

Both platforms close a code block at the next ```, wherever it stands, and both keep
inline code out of the rewrites that follow (emphasis, links) by parking it behind a
placeholder first. One copy of those rules, so the two converters agree on what counts
as code.
"""

from __future__ import annotations

import re

# An opening fence: up to three spaces, three or more backticks or tildes, the rest.
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# A placeholder character from the private-use area: never in model text, never escaped.
_SLOT = "\ue001"
_SLOTTED = re.compile(f"{_SLOT}(\\d+){_SLOT}")


def closes(marker: str, line: str) -> bool:
    """Whether `line` closes the fence opened with `marker` (same character, at least as
    many of it, nothing after)."""
    return re.match(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}\s*$", line) is not None


def defuse_fences(code: str) -> str:
    """Code that itself holds ``` would end the block early (Discord and Slack close a block
    at the next ```, wherever it is): a zero-width space keeps it showing as written."""
    return code.replace("```", "``\u200b`")


class Slots:
    """Fragments parked behind placeholders while the rest of a line is rewritten, then
    put back as they were."""

    def __init__(self) -> None:
        self._kept: list[str] = []

    def keep(self, value: str) -> str:
        self._kept.append(value)
        return f"{_SLOT}{len(self._kept) - 1}{_SLOT}"

    def restore(self, text: str) -> str:
        return _SLOTTED.sub(lambda m: self._kept[int(m.group(1))], text)
