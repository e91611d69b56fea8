"""Turn events into terminal text: streamed answers and one short line per tool step.

Deltas are written straight to the stream and flushed: re-rendering the whole answer per
delta (Rich Live) costs more than the model takes to produce it. On a terminal the chat
draws its answers as markdown instead, a paragraph at a time (`markdown.py`). Colours are plain ANSI
codes, on only when the stream is a terminal, so piped output stays clean text.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, TextIO

from seam.apps.cli.safe_text import terminal_safe as terminal_safe
from seam.contracts.events import (
    AgentEvent,
    Done,
    ErrorEvent,
    Halt,
    Notice,
    TextDelta,
    ThinkingDelta,
    ToolApprovalResponse,
    ToolEnd,
    ToolProgress,
    ToolStart,
)

if TYPE_CHECKING:
    from seam.apps.cli.markdown import MarkdownStream

ARGS_PREVIEW_CHARS = 120
# Said after a turn whose answer stopped short for a reason the reader should know.
FINISH_NOTES = {
    "cancelled": "(cancelled)",
    "length": "(cut off: the model reached its output limit)",
    "content_filter": "(stopped by the provider's content filter)",
}


# What JSON leaves unescaped but a terminal may act on: DEL and the C1 controls.
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f]")


def json_safe(encoded: str) -> str:
    """JSON text (from `json.dumps(..., ensure_ascii=False)`) with DEL and the C1 controls
    escaped as well: the same JSON value, safe to print on a terminal."""
    if _JSON_UNSAFE.search(encoded) is None:
        return encoded
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", encoded)


class Style:
    """ANSI styling that turns itself off when output is not a terminal. What it styles is
    passed through `terminal_safe` first, styled or not."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    @classmethod
    def for_stream(cls, stream: TextIO) -> Style:
        return cls(stream.isatty())

    def _wrap(self, code: str, text: str) -> str:
        text = terminal_safe(text)
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text

    def plain(self, text: str) -> str:
        """Unstyled, but as safe to print as styled text."""
        return terminal_safe(text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def red(self, text: str) -> str:
        return self._wrap("31", text)

    def green(self, text: str) -> str:
        return self._wrap("32", text)

    def yellow(self, text: str) -> str:
        return self._wrap("33", text)


def first_line(text: str) -> str:
    stripped = text.strip()
    return stripped.split("\n", 1)[0] if stripped else ""


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def arguments_preview(arguments: str, limit: int = ARGS_PREVIEW_CHARS) -> str:
    """Tool arguments on one line; the model's raw text when it is not valid JSON."""
    try:
        text = json.dumps(json.loads(arguments), ensure_ascii=False) if arguments.strip() else ""
    except json.JSONDecodeError:
        text = " ".join(arguments.split())
    return shorten(text, limit)


def duration(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def tool_start_line(event: ToolStart) -> str:
    preview = arguments_preview(event.arguments)
    return f"⚙ {event.name} {preview}" if preview else f"⚙ {event.name}"


def tool_end_line(event: ToolEnd) -> str:
    if event.is_error:
        return f"✗ {event.name}: {shorten(first_line(event.result), ARGS_PREVIEW_CHARS)}"
    return f"✓ {event.name} {duration(event.duration_ms)}"


class TurnView:
    """Writes a turn's events to a terminal as they arrive.

    With `text=False` only tool activity is shown (what `seam run` puts on stderr while
    stdout waits for the final answer).
    """

    def __init__(
        self, out: TextIO, style: Style, *, text: bool = True, markdown: bool = False
    ) -> None:
        self._out = out
        self._style = style
        self._text = text
        self._at_line_start = True
        self._thinking = False
        # With `markdown` (a terminal), the answer is drawn a paragraph at a time.
        self._markdown: MarkdownStream | None = None
        if markdown:  # Rich loads only for a person at a terminal
            from seam.apps.cli.markdown import MarkdownStream

            self._markdown = MarkdownStream(out)

    def __call__(self, event: AgentEvent) -> None:
        """Show one event: streamed text, a tool's activity, or (with text) how the turn
        ended; anything else is not shown."""
        if isinstance(event, TextDelta | ThinkingDelta):
            self._show_delta(event)
            return
        line = self._activity_line(event)
        if line is not None:
            self._line(line)
        elif self._text:
            self._show_end(event)

    def _show_delta(self, event: TextDelta | ThinkingDelta) -> None:
        """Streamed text, only with `text`; reasoning is shown only on a terminal (a
        script reading the chat wants answers)."""
        if not self._text:
            return
        if isinstance(event, TextDelta):
            self._write_text(event.text)
        elif self._style.enabled:
            self._write_text(event.text, thinking=True)

    def _activity_line(self, event: AgentEvent) -> str | None:
        """The line for a tool's activity or a notice (shown even without `text`), or
        None for any other event."""
        style = self._style
        if isinstance(event, ToolStart):
            return style.dim(tool_start_line(event))
        if isinstance(event, ToolProgress):
            return style.dim(f"  … {event.name}: {event.message}")
        if isinstance(event, ToolEnd):
            line = tool_end_line(event)
            return style.red(line) if event.is_error else style.dim(line)
        if isinstance(event, ToolApprovalResponse):
            approved = event.decision in ("once", "session", "always")
            line = f"  {'approved' if approved else 'denied'} ({event.decision.replace('_', ' ')})"
            if event.decision == "unavailable":
                line = "  not run (no one was available to approve it)"
            return style.dim(line) if approved else style.yellow(line)
        if isinstance(event, Notice):
            return style.yellow(f"note ({event.kind}): {event.message}")
        return None

    def _show_end(self, event: AgentEvent) -> None:
        """How the turn ended: an error, a halt (a cancel says so elsewhere), or done."""
        style = self._style
        if isinstance(event, ErrorEvent):
            self._line(style.red(f"error: {event.message}"))
        elif isinstance(event, Halt) and event.reason == "budget":
            self._line(style.yellow(event.message))  # "budget: ..." names the limit
        elif isinstance(event, Halt) and event.reason != "cancelled":
            self._line(style.yellow(f"halted: {event.message}"))
        elif isinstance(event, Done):
            self._finish(event)

    def note(self, line: str) -> None:
        """A line of the surface's own (e.g. "(cancelled)"), on a line of its own."""
        self._line(self._style.dim(line))

    def warn(self, line: str) -> None:
        """A warning of the surface's own (e.g. a retry), on a line of its own."""
        self._line(self._style.yellow(line))

    def _write_text(self, text: str, *, thinking: bool = False) -> None:
        if not text:
            return
        if self._markdown is not None:
            if not thinking:
                self._markdown.feed(text)
                self._at_line_start = self._markdown.at_line_start
                return
            self.end_text()
        out = self._out
        if thinking != self._thinking and not self._at_line_start:
            out.write("\n")
        self._thinking = thinking
        out.write(self._style.dim(text) if thinking else terminal_safe(text))
        out.flush()
        self._at_line_start = text.endswith("\n")

    def end_text(self) -> None:
        """Draw the answer text still held back for markdown (the answer, or this stretch
        of it before a tool runs, ended)."""
        if self._markdown is not None and self._markdown.holding:
            self._markdown.flush()
            self._at_line_start = True
            self._thinking = False

    def _line(self, line: str) -> None:
        self.end_text()
        out = self._out
        if not self._at_line_start:
            out.write("\n")
        out.write(line + "\n")
        out.flush()
        self._at_line_start = True
        self._thinking = False

    def _finish(self, done: Done) -> None:
        self.end_text()
        note = FINISH_NOTES.get(done.finish_reason)
        if note:
            self._line(self._style.dim(note))
        elif not self._at_line_start:
            self._out.write("\n")
            self._out.flush()
            self._at_line_start = True
