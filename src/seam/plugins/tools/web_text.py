"""The text of an HTML page as `web_fetch` shows it: headings as '#', list items as '-',
links as [text](url); scripts, styles, navigation and hidden elements dropped. Only the
standard library's `html.parser`, imported by the first page a session fetches.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

_SKIP = frozenset(
    {"script", "style", "noscript", "template", "svg", "nav", "iframe", "object", "canvas"}
)
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
_BLOCK = frozenset(
    {
        "address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt",
        "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
        "hr", "li", "main", "ol", "p", "pre", "section", "summary", "table", "tr", "ul",
    }
)  # fmt: skip
# A start tag of the key closes open elements of its group, as browsers do: block
# elements end an open paragraph, a list item ends the previous one, and so on.
_P = frozenset({"p"})
_AUTO_CLOSE = {
    **dict.fromkeys(
        ("address", "article", "aside", "blockquote", "div", "dl", "footer", "form", "h1",
         "h2", "h3", "h4", "h5", "h6", "header", "main", "nav", "ol", "p", "pre", "section",
         "table", "ul"),
        _P,
    ),
    "li": frozenset({"li", "p"}),
    "dt": frozenset({"dt", "dd", "p"}),
    "dd": frozenset({"dt", "dd", "p"}),
    "tr": frozenset({"tr", "td", "th"}),
    "td": frozenset({"td", "th"}),
    "th": frozenset({"td", "th"}),
    "option": frozenset({"option"}),
}  # fmt: skip
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


def html_to_text(html: str, base_url: str = "") -> str:
    """Readable text: headings as '#', list items as '-', links as [text](url).
    Scripts, styles, navigation and hidden elements are dropped: hidden text is a
    favourite carrier of prompt injections and is never what a reader saw."""
    parser = _TextExtractor(base_url)
    parser.feed(html)
    parser.close()
    return parser.text()


class _TextExtractor(HTMLParser):
    """Keeps a stack of open elements, closing the ones HTML lets authors leave open, so a
    hidden element without its end tag hides itself and not the rest of the page."""

    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self._base = base_url
        self._lines: list[str] = []
        self._parts: list[str] = []
        self._prefix = ""
        self._stack: list[str] = []
        self._skip_at = -1  # stack depth of the element being skipped; -1: none
        self._pre = 0
        self._title: list[str] | None = None
        self.title = ""
        self._links: list[tuple[int, str]] = []  # (index into parts, href) of open <a>

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            if self._skip_at < 0 and tag in _BLOCK:
                self._flush()
            return
        stack = self._stack
        group = _AUTO_CLOSE.get(tag)
        while group and stack and stack[-1] in group:
            self._end(stack[-1])
        stack.append(tag)
        if self._skip_at >= 0:
            return
        if tag in _SKIP or _hidden(attrs):
            self._skip_at = len(stack) - 1
        elif tag == "title":
            self._title = []
        elif tag in _BLOCK:
            self._open_block(tag)
        elif tag in ("td", "th") and self._parts:
            self._parts.append(" | ")
        elif tag == "a":
            self._links.append((len(self._parts), dict(attrs).get("href") or ""))

    def _open_block(self, tag: str) -> None:
        """A block starts a line: a heading's with its #s, a list item's with "- "."""
        self._flush()
        if tag[0] == "h" and tag[1:].isdigit():
            self._prefix = "#" * int(tag[1]) + " "
        elif tag == "li":
            self._prefix = "- "
        elif tag == "pre":
            self._pre += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self._stack:  # a stray end tag closes nothing
            self._end(tag)

    def _end(self, tag: str) -> None:
        stack = self._stack
        while stack:
            top = stack.pop()
            if self._skip_at >= 0:
                if len(stack) <= self._skip_at:
                    self._skip_at = -1
            elif top == "title" and self._title is not None:
                self.title = _SPACES.sub(" ", "".join(self._title)).strip()
                self._title = None
            elif top == "a" and self._links:
                self._close_link(*self._links.pop())
            elif top in _BLOCK:
                self._flush()
                if top == "pre":
                    self._pre -= 1
            if top == tag:
                return

    def handle_data(self, data: str) -> None:
        if self._skip_at >= 0:
            return
        if self._title is not None:
            self._title.append(data)
        else:
            self._parts.append(data if self._pre else _SPACES.sub(" ", data))

    def _close_link(self, start: int, href: str) -> None:
        label = _SPACES.sub(" ", "".join(self._parts[start:])).strip()
        target = urljoin(self._base, href) if href and not href.startswith("#") else ""
        if label and target.startswith(("http://", "https://")):
            self._parts[start:] = [f"[{label}]({target})"]

    def _flush(self) -> None:
        if self._links:  # a link spanning blocks goes on in the next one
            self._links = [(0, href) for _, href in self._links]
        if self._parts:
            joined = "".join(self._parts)
            text = joined.strip("\n") if self._pre else _SPACES.sub(" ", joined).strip()
            if text:
                if self._prefix.startswith("#") and self._lines:
                    self._lines.append("")
                self._lines.append(self._prefix + text)
            self._parts = []
        self._prefix = ""

    def text(self) -> str:
        self._flush()
        body = "\n".join(self._lines)
        return f"Title: {self.title}\n\n{body}" if self.title else body


def _hidden(attrs: list[tuple[str, str | None]]) -> bool:
    for name, value in attrs:
        if name == "hidden" or (name == "aria-hidden" and value == "true"):
            return True
        if name == "style" and value and _HIDDEN_STYLE.search(value):
            return True
    return False
