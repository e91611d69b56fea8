"""Markdown (as models write it) for Discord, split at Discord's 2,000 characters.

Discord renders Markdown natively, with a few differences that would mis-render a model's
text: `__x__` is *underline* there (bold in Markdown), only `#`..`###` are headings,
images are not embedded from Markdown (`![a](u)` would show a stray `!`) and tables have
no syntax. Those are rewritten; code is left untouched. Pings (`@everyone`, `<@id>`) are
not escaped here: the adapter sends with mentions disabled, so text shows as written.
"""

from __future__ import annotations

import re

from seam.plugins.chat.markdown_code import CODE_SPAN, FENCE, Slots, closes, defuse_fences
from seam.plugins.chat.split import split_formatted

DISCORD_MAX_TEXT = 2000

_UNDERSCORE_BOLD = re.compile(r"(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)")
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(([^)\s]+)\)")
_DEEP_HEADING = re.compile(r"^ {0,3}#{4,6}\s+(.+?)\s*#*\s*$")


def to_discord(markdown: str) -> str:
    out: list[str] = []
    lines = markdown.replace("\r\n", "\n").split("\n")
    in_fence: str | None = None
    for line in lines:
        fence = FENCE.match(line)
        if in_fence is not None:
            if closes(in_fence, line):
                out.append("```")
                in_fence = None
            else:
                out.append(defuse_fences(line))
            continue
        if fence:
            in_fence = fence.group(1)
            # Discord knows ``` fences only.
            out.append("```" + fence.group(2).strip())
            continue
        out.append(_line(line))
    if in_fence is not None:
        out.append("```")
    return "\n".join(out)


def _line(line: str) -> str:
    heading = _DEEP_HEADING.match(line)
    if heading:
        line = f"**{heading.group(1)}**"
    slots = Slots()
    line = CODE_SPAN.sub(lambda m: slots.keep(m.group(0)), line)
    line = _UNDERSCORE_BOLD.sub(r"**\1**", line)
    line = _IMAGE.sub(r"[\1](\2)", line)
    return slots.restore(line)


def format_discord(markdown: str, limit: int = DISCORD_MAX_TEXT) -> list[str]:
    """Converted and split: each part within `limit`, code blocks kept whole."""
    return split_formatted(markdown, limit, to_discord)
