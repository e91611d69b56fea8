"""Answers as markdown on a terminal: headings, emphasis, lists and code rendered by Rich.

Only for a terminal: piped output stays the model's text as written, so scripts and files
get plain markdown. A streamed answer is rendered a block at a time: text is held until a
blank line ends a paragraph (outside a code fence, so a fenced block is rendered whole),
then that paragraph is drawn; the rest is drawn when the answer ends. So a person still
sees the answer grow, paragraph by paragraph, and never a half-drawn list or code block.

What is rendered is made `terminal_safe` first (the model's text never drives the
terminal), and links are drawn as "text (address)", never as hidden terminal hyperlinks
that could show one address and open another.
"""

from __future__ import annotations

import re
from typing import TextIO

from seam.apps.cli.safe_text import terminal_safe

_FENCE = re.compile(r"^ {0,3}(```|~~~)", re.MULTILINE)
_BLANK = re.compile(r"\n[ \t]*\n")


def render_markdown(text: str, out: TextIO) -> None:
    """Draw `text` as markdown on `out` (a terminal)."""
    from rich.console import Console
    from rich.markdown import Markdown

    console = Console(file=out, force_terminal=True, highlight=False, soft_wrap=False)
    console.print(Markdown(terminal_safe(text), hyperlinks=False))
    out.flush()


def _closed_upto(text: str) -> int:
    """The end of the last blank line in `text` that is outside a code fence (0: none):
    everything before it is whole blocks, safe to draw now."""
    end = 0
    for blank in _BLANK.finditer(text):
        if len(_FENCE.findall(text, 0, blank.start())) % 2 == 0:
            end = blank.end()
    return end


class MarkdownStream:
    """A streamed answer drawn as markdown a block at a time (see the module doc)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._held = ""
        self._drawn = False

    @property
    def holding(self) -> bool:
        return bool(self._held.strip())

    def feed(self, text: str) -> None:
        """Take more of the answer; draw the blocks it completes."""
        self._held += text
        end = _closed_upto(self._held)
        if end:
            ready, self._held = self._held[:end], self._held[end:]
            self._draw(ready)

    def flush(self) -> None:
        """The answer (or this stretch of it) ended: draw what is held."""
        held, self._held = self._held, ""
        self._draw(held)

    def _draw(self, text: str) -> None:
        if not text.strip():
            return
        if self._drawn:
            self._out.write("\n")  # the blank line between blocks Rich does not repeat
        render_markdown(text, self._out)
        self._drawn = True
