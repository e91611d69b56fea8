"""Markdown (as models write it) to Telegram's HTML parse mode, split at Telegram's limit.

Why HTML and not MarkdownV2: MarkdownV2 wants eighteen characters escaped outside
entities, different ones inside code and link URLs, and rejects the whole message
("can't parse entities") on a single miss, which a model's free-form text (snake_case,
file paths, "1.5", "C++", emoticons) hits constantly. In HTML only `<`, `>` and `&` are
special, every tag here comes from this converter and wraps an already converted
fragment, so the output is well nested by construction, and a marker left unmatched (a
stray `*`, a bold cut in two by the splitter) simply stays text. The fallback for
whatever still fails is plain text (`html_to_plain`), sent without a parse mode.

Supported: **bold** / __bold__, *italic* / _italic_ (underscores only at word edges, so
snake_case stays as is), ~~strike~~, ||spoiler||, `code`, fenced code with a language,
[links](https://...), <https://autolinks>, # headings (bold), > quotes, "-"/"*"/"+"
bullets (as "•"). Tables and the rest stay as text.

Telegram caps a message at 4096 characters after entity parsing, counted in UTF-16 code
units; parts are measured as the HTML they are sent as, in UTF-16 units, which never
undercounts.
"""

from __future__ import annotations

import html
import re

from seam.plugins.chat.split import Block, parse_blocks, split_formatted

TELEGRAM_LIMIT = 4096

_ESCAPABLE = set("\\`*_{}[]()#+-.!|~>\"'<&=$%^@:;,/?")
_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("***", ("b", "i")),
    ("**", ("b",)),
    ("__", ("b",)),
    ("~~", ("s",)),
    ("||", ("tg-spoiler",)),
    ("*", ("i",)),
    ("_", ("i",)),
)
_LINK = re.compile(
    r"\[([^\[\]\n]*)\]\(\s*<?((?:[^\s()<>]|\([^\s()<>]*\))+)>?(?:\s+\"[^\"]*\")?\s*\)"
)
_AUTOLINK = re.compile(r"<((?:https?|tg|mailto):[^\s<>]+)>")
_URL_OK = re.compile(r"^(?:https?://|tg://|mailto:)", re.IGNORECASE)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_QUOTE = re.compile(r"^ {0,3}>[ ]?(.*)$")
_BULLET = re.compile(r"^(\s*)[-*+][ \t]+(.*)$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_LANGUAGE = re.compile(r"^[\w#+.-]{1,32}$")
_TAG = re.compile(r"<[^>]*>")
# Where inline Markdown may start; the text between two of these is only escaped.
_SPECIAL = re.compile(r"[\\`\[<*_~|]")


def utf16_len(text: str) -> int:
    """Length as Telegram counts it: UTF-16 code units (an emoji outside the BMP is two)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def escape(text: str) -> str:
    return html.escape(text, quote=False)


def to_telegram_html(markdown: str) -> str:
    """One message's Markdown as Telegram HTML (no splitting)."""
    out: list[str] = []
    for block in parse_blocks(markdown):
        if out:
            out.append("\n\n" if block.after_blank else "\n")
        out.append(_code_block(block) if block.is_code else _paragraph(block.text))
    return "".join(out)


def format_telegram(markdown: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """Markdown as Telegram HTML messages, each at most `limit` UTF-16 units, code blocks
    kept whole (or re-fenced when longer than a message)."""
    return split_formatted(markdown, limit, to_telegram_html, measure=utf16_len)


def html_to_plain(text: str) -> str:
    """What a formatted message reads as, for resending without a parse mode."""
    return html.unescape(_TAG.sub("", text))


def _code_block(block: Block) -> str:
    body = escape(block.text)
    language = block.language
    if language and _LANGUAGE.match(language):
        return f'<pre><code class="language-{escape(language)}">{body}</code></pre>'
    return f"<pre>{body}</pre>"


def _paragraph(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    quote: list[str] = []

    def flush_quote() -> None:
        if quote:
            out.append("<blockquote>" + "\n".join(quote) + "</blockquote>")
            quote.clear()

    for line in lines:
        quoted = _QUOTE.match(line)
        if quoted:
            quote.append(inline(quoted.group(1)))
            continue
        flush_quote()
        out.append(_line(line))
    flush_quote()
    return "\n".join(out)


def _line(line: str) -> str:
    heading = _HEADING.match(line)
    if heading:
        return f"<b>{inline(heading.group(1))}</b>"
    if _RULE.match(line):
        return "——————"
    bullet = _BULLET.match(line)
    if bullet:
        return f"{bullet.group(1)}• {inline(bullet.group(2))}"
    return inline(line)


def inline(text: str) -> str:
    """Inline Markdown (one line) as Telegram HTML. Each tag wraps the converted inside of
    a matched pair, so tags nest properly whatever the input; unmatched markers are text."""
    out: list[str] = []
    i = 0
    while i < len(text):
        special = _SPECIAL.search(text, i)
        if special is None:
            out.append(escape(text[i:]))
            break
        if special.start() > i:
            out.append(escape(text[i : special.start()]))
        i = _special(text, special.start(), out)
    return "".join(out)


def _special(text: str, i: int, out: list[str]) -> int:
    """Convert what starts at `text[i]` (a character of `_SPECIAL`) onto `out`; return
    where the text goes on."""
    ch = text[i]
    if ch == "\\" and i + 1 < len(text) and text[i + 1] in _ESCAPABLE:
        out.append(escape(text[i + 1]))
        return i + 2
    if ch == "`":
        return _code_span(text, i, out)
    link = _LINK.match(text, i) if ch == "[" else None
    if link:
        out.append(_link(inline(link.group(1)), link.group(2)))
        return link.end()
    auto = _AUTOLINK.match(text, i) if ch == "<" else None
    if auto:
        out.append(_link(escape(auto.group(1)), auto.group(1)))
        return auto.end()
    end = _emphasis(text, i, out)
    if end is not None:
        return end
    run = i + 1
    if ch in "*_~|":
        # An unmatched run of markers is text as a whole ("**" alone stays "**").
        while run < len(text) and text[run] == ch:
            run += 1
    out.append(escape(text[i:run]))
    return run


def _emphasis(text: str, i: int, out: list[str]) -> int | None:
    """The longest marker at `i` with its closer, converted onto `out` (where the text
    goes on), or None when it is not closed."""
    for marker, tags in _MARKERS:
        if text.startswith(marker, i):
            end = _closing(text, i, marker)
            if end is None:
                return None
            inside = inline(text[i + len(marker) : end])
            opening = "".join(f"<{tag}>" for tag in tags)
            closing = "".join(f"</{tag}>" for tag in reversed(tags))
            out.append(f"{opening}{inside}{closing}")
            return end + len(marker)
    return None


def _code_span(text: str, i: int, out: list[str]) -> int:
    run = i
    while run < len(text) and text[run] == "`":
        run += 1
    width = run - i
    search = run
    while True:
        close = text.find("`" * width, search)
        if close < 0:
            out.append(escape(text[i:run]))
            return run
        after = close + width
        if after < len(text) and text[after] == "`":
            # a longer run of backticks does not close this span
            search = after
            while search < len(text) and text[search] == "`":
                search += 1
            continue
        code = text[run:close]
        if len(code) > 2 and code[0] == " " and code[-1] == " " and code.strip():
            code = code[1:-1]
        if not code:
            out.append(escape(text[i:after]))
        else:
            out.append(f"<code>{escape(code)}</code>")
        return after


def _closing(text: str, i: int, marker: str) -> int | None:
    """Where the marker opened at `i` closes, or None: the opener must be followed by a
    non-space, the closer preceded by one; `_` and `__` only at word edges; a single `*`
    or `_` is not half of a double one."""
    start = i + len(marker)
    if start >= len(text) or text[start].isspace():
        return None
    word_edges = marker[0] == "_"
    if word_edges and i > 0 and text[i - 1].isalnum():
        return None
    single = len(marker) == 1
    if single and text.startswith(marker, start):
        return None
    j = start + 1
    while True:
        j = text.find(marker, j)
        if j < 0:
            return None
        after = j + len(marker)
        ok = not text[j - 1].isspace()
        if single and (text[j - 1] == marker or (after < len(text) and text[after] == marker)):
            ok = False
        if word_edges and after < len(text) and text[after].isalnum():
            ok = False
        if ok:
            return j
        j += 1


def _link(label: str, url: str) -> str:
    if not _URL_OK.match(url):
        return f"{label} ({escape(url)})" if label else escape(url)
    href = html.escape(url, quote=True)
    return f'<a href="{href}">{label or escape(url)}</a>'
