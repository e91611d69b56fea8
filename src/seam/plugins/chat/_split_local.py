"""A minimal Markdown splitter for the Slack and Discord formatters, until the shared
`plugins/chat/split.py` is folded in: the same two functions (`split_markdown`,
`split_formatted`), so folding is changing an import. Same idea: split at paragraph, then
line, then word boundaries; a fenced code block is kept whole unless it alone is over the
limit, then it is cut at lines and each piece re-fenced with its language.

`measure` is applied to each candidate part, so a platform's escaping is counted: a part
is within `limit` after it is formatted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

Measure = Callable[[str], int]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def split_markdown(text: str, limit: int, *, measure: Measure = len) -> list[str]:
    """`text` in parts, each `measure(part) <= limit`; [] for blank text."""
    if limit < 16:
        raise ValueError("limit too small to split Markdown")
    parts = _pack(
        list(_blocks(text)), "\n\n", limit, measure, lambda b: _split_block(b, limit, measure)
    )
    return [p for p in parts if p.strip()]


def split_formatted(
    text: str, limit: int, format: Callable[[str], str], *, measure: Measure = len
) -> list[str]:
    """`text` split as Markdown and each part converted by `format`, with
    `measure(format(part)) <= limit` for every part."""
    parts = split_markdown(text, limit, measure=lambda md: measure(format(md)))
    return [format(part) for part in parts]


def _blocks(text: str) -> Iterator[str]:
    """Paragraphs and fenced code blocks, in order (a fence is one block)."""
    lines = text.replace("\r\n", "\n").split("\n")
    para: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            if para:
                yield "\n".join(para)
                para = []
            marker = fence.group(1)
            closing = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}\s*$")
            block = [line]
            i += 1
            while i < len(lines):
                block.append(lines[i])
                i += 1
                if closing.match(block[-1]):
                    break
            else:
                block.append(marker)  # an unclosed fence is closed, as renderers do
            yield "\n".join(block)
            continue
        if line.strip():
            para.append(line)
        elif para:
            yield "\n".join(para)
            para = []
        i += 1
    if para:
        yield "\n".join(para)


def _pack(
    units: list[str], sep: str, limit: int, measure: Measure, split_unit: Callable[[str], list[str]]
) -> list[str]:
    out: list[str] = []
    current: str | None = None
    for unit in units:
        if measure(unit) > limit:
            if current is not None:
                out.append(current)
                current = None
            out.extend(split_unit(unit))
            continue
        candidate = unit if current is None else current + sep + unit
        if measure(candidate) <= limit:
            current = candidate
        else:
            if current is not None:
                out.append(current)
            current = unit
    if current is not None:
        out.append(current)
    return out


def _split_block(block: str, limit: int, measure: Measure) -> list[str]:
    lines = block.split("\n")
    fence = _FENCE.match(lines[0])
    if fence and len(lines) >= 2:
        opener, closer = lines[0].strip(), fence.group(1)

        def fenced(body: str) -> str:
            return f"{opener}\n{body}\n{closer}"

        def fits(body: str) -> int:
            return measure(fenced(body))

        def cut_line(line: str) -> list[str]:
            return _hard_cut(line, lambda s: fits(s) <= limit)

        bodies = _pack(lines[1:-1], "\n", limit, fits, cut_line)
        return [fenced(b) for b in bodies]
    return _pack(lines, "\n", limit, measure, lambda line: _split_line(line, limit, measure))


def _split_line(line: str, limit: int, measure: Measure) -> list[str]:
    def cut_word(word: str) -> list[str]:
        return _hard_cut(word, lambda s: measure(s) <= limit)

    return _pack(line.split(" "), " ", limit, measure, cut_word)


def _hard_cut(text: str, fits: Callable[[str], bool]) -> list[str]:
    """`text` cut into the longest prefixes that fit (binary search per piece)."""
    out: list[str] = []
    while text:
        lo, hi = 1, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(text[:mid]):
                lo = mid
            else:
                hi = mid - 1
        out.append(text[:lo])
        text = text[lo:]
    return out
