"""Markdown (as models write it) to Slack mrkdwn, split at Slack's limit.

Slack's own dialect: `*bold*`, `_italic_`, `~strike~`, `` `code` ``, ``` fences (no
language), `<url|text>` links, `>` quotes; no headings or list syntax (a heading becomes a
bold line, a bullet a `•`). `&`, `<` and `>` are control characters everywhere, code
included, so they are always escaped (`&amp;`, `&lt;`, `&gt;`).
"""

from __future__ import annotations

import re

from seam.plugins.chat.markdown_code import CODE_SPAN, FENCE, Slots, closes, defuse_fences
from seam.plugins.chat.split import split_formatted

# Slack accepts ~40,000 characters in a message but folds anything past ~4,000 behind
# "show more"; parts of 4,000 stay readable.
SLACK_MAX_TEXT = 4000

_LINK = re.compile(r"!?\[([^\]\n]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC_STAR = re.compile(r"(?<![\*\w])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\*\w])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HR = re.compile(r"^ {0,3}([-*_])( *\1){2,} *$")
# A placeholder from the private-use area: never in model text, never escaped.
_BOLD_MARK = "\ue000"


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_mrkdwn(markdown: str) -> str:
    out: list[str] = []
    lines = markdown.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence:
            marker = fence.group(1)
            body: list[str] = []
            i += 1
            while i < len(lines) and not closes(marker, lines[i]):
                body.append(lines[i])
                i += 1
            i += 1  # the closing fence (or the end)
            out.append("```\n" + defuse_fences(escape("\n".join(body))) + "\n```")
            continue
        out.append(_line(lines[i]))
        i += 1
    return "\n".join(out)


def _line(line: str) -> str:
    if _HR.match(line):
        return "──────────"
    heading = _HEADING.match(line)
    if heading:
        return f"*{_inline(heading.group(1), in_bold=True)}*"
    quote = ""
    if line.lstrip().startswith(">"):
        quote, line = "> ", line.lstrip()[1:].removeprefix(" ")
    bullet = _BULLET.match(line)
    if bullet:
        line = f"{bullet.group(1)}• {line[bullet.end() :]}"
    return quote + _inline(line)


def _inline(text: str, *, in_bold: bool = False) -> str:
    """One line outside code fences: code spans kept verbatim (escaped), links made
    `<url|text>`, emphasis rewritten; everything else escaped."""
    slots = Slots()
    keep = slots.keep
    text = CODE_SPAN.sub(lambda m: keep(f"`{escape(m.group(2))}`"), text)
    text = _LINK.sub(lambda m: keep(_link(m.group(2), m.group(1))), text)
    text = _AUTOLINK.sub(lambda m: keep(_link(m.group(1), "")), text)
    text = escape(text)
    text = _BOLD.sub(
        lambda m: m.group(2) if in_bold else f"{_BOLD_MARK}{m.group(2)}{_BOLD_MARK}", text
    )
    text = _ITALIC_STAR.sub(r"_\1_", text)
    text = _STRIKE.sub(r"~\1~", text)
    text = text.replace(_BOLD_MARK, "*")
    return slots.restore(text)


def _link(url: str, label: str) -> str:
    url = escape(url).replace("|", "%7C")
    label = escape(label).replace("|", "¦")
    return f"<{url}|{label}>" if label and label != url else f"<{url}>"


def format_slack(markdown: str, limit: int = SLACK_MAX_TEXT) -> list[str]:
    """Converted and split: each part is mrkdwn within `limit`, code blocks kept whole."""
    return split_formatted(markdown, limit, to_mrkdwn)
