"""`terminal_safe`: text from a model, a tool or a transcript, made safe to print.

Apart from `render.py` (which re-exports it) so the markdown renderer can use it too.
"""

from __future__ import annotations

import re

# Every C0 control but tab and newline, DEL, and the C1 controls (U+0080-U+009F, where
# U+009B is a one-character CSI and U+009D an OSC). ESC starts every escape sequence.
_CONTROL = re.compile(r"\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    return "\n" if char == "\r\n" else f"\\x{ord(char):02x}"


def terminal_safe(text: str) -> str:
    """`text` with every control character shown as `\\xNN` instead of obeyed.

    What a model writes, a tool prints or a transcript holds is not trusted to drive the
    terminal: an escape sequence could set the clipboard (OSC 52), plant a link that shows
    one address and opens another (OSC 8), clear the screen or move the cursor to paint
    over what a person is about to approve, and a bare carriage return could overwrite a
    line. Each such character is made visible, so nothing is hidden and nothing obeyed;
    tabs and newlines stay, and a Windows line end becomes a plain newline. Styling is
    applied after this, by `Style`, so its own escape codes are the only ones that reach
    the terminal."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(_visible, text)
