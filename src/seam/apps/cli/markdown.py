"""Answers as markdown on a terminal: headings, emphasis, lists and code rendered by Rich.

Only for a terminal: piped output stays the model's text as written, so scripts and files
get plain markdown. `seam run` draws its answer once complete. In `seam chat` a streamed
answer is shown as it arrives, and each block is redrawn as markdown when it is complete:
at a blank line that ends a paragraph (outside a code fence, so a fenced block is drawn
whole), and at the end of the answer (or before a tool runs). So a person sees the answer
grow as before, then settle into its rendered form a paragraph at a time.

What is rendered is made `terminal_safe` first (the model's text never drives the
terminal), and links are drawn as "text (address)", never as hidden terminal hyperlinks
that could show one address and open another.
"""

from __future__ import annotations

import re
from typing import TextIO

from rich.cells import cell_len
from rich.markdown import Markdown

from seam.apps.cli.safe_text import terminal_safe

_FENCE = re.compile(r"^ {0,3}(```|~~~)", re.MULTILINE)
_BLANK = re.compile(r"\n[ \t]*\n")


def render_markdown(text: str, out: TextIO) -> None:
    """Draw `text` as markdown on `out` (a terminal)."""
    from rich.console import Console

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
    """A streamed answer on a terminal: its text is shown as it arrives, and each block
    is redrawn as markdown once complete (see the module doc). A block taller than the
    screen stays as it arrived: what scrolled away cannot be redrawn."""

    def __init__(self, out: TextIO) -> None:
        from rich.console import Console

        self._out = out
        self._console = Console(file=out, force_terminal=True, highlight=False)
        self._held = ""  # the current block's text, shown as it arrived
        self._drawn = False

    @property
    def holding(self) -> bool:
        return bool(self._held)

    @property
    def at_line_start(self) -> bool:
        return not self._held or self._held.endswith("\n")

    def feed(self, text: str) -> None:
        """Show more of the answer; redraw the blocks it completes."""
        self._out.write(terminal_safe(text))
        self._out.flush()
        self._held += text
        end = _closed_upto(self._held)
        if end:
            shown, ready, rest = self._held, self._held[:end], self._held[end:]
            self._held = rest
            if self._redraw(shown, ready):
                self._out.write(terminal_safe(rest))
                self._out.flush()

    def flush(self) -> None:
        """The answer (or this stretch of it) ended: redraw what is held."""
        held, self._held = self._held, ""
        if held:
            self._redraw(held, held)

    def _redraw(self, shown: str, text: str) -> bool:
        """Replace `shown` (as it arrived, the cursor at its end) with `text` drawn as
        markdown; False when `shown` is too tall to go back over (it stays as it is)."""
        rows = self._rows(shown)
        if rows >= self._console.size.height:
            if not shown.endswith("\n"):
                self._out.write("\n")
            self._out.flush()
            return False
        self._out.write(f"\x1b[{rows - 1}A\r\x1b[J" if rows > 1 else "\r\x1b[J")
        if not text.strip():
            return True
        if self._drawn:
            self._out.write("\n")  # the blank line between blocks Rich does not repeat
        self._console.print(Markdown(terminal_safe(text), hyperlinks=False))
        self._out.flush()
        self._drawn = True
        return True

    def _rows(self, shown: str) -> int:
        """The screen rows `shown` took, from the start of its first one to the cursor."""
        width = max(1, self._console.size.width)
        lines = terminal_safe(shown).split("\n")
        return sum(max(1, -(-cell_len(line) // width)) for line in lines)
