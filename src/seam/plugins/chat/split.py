"""Splitting a Markdown answer into chat messages that each fit a platform's limit.

A chat platform caps a message (Telegram 4096 characters, Slack about 40,000, Discord
2000), and the cap counts the text *after* the platform's formatting (escapes, tags). So
the splitter takes a `measure` callable (by default `len`; a platform passes "format this
Markdown, count what the platform would count") and guarantees `measure(part) <= limit`
for every part it returns.

Cuts fall at the coarsest boundary that works: between blocks (paragraphs and fenced code
blocks), then between lines, then between words, and only for a word longer than a whole
message between characters. A fenced code block is never cut while it fits in a message
on its own; one longer than that is cut between its lines and every piece is fenced again
with the same fence and language, so each part renders as code and fences stay balanced.

Greedy packing asks `measure` about O(log n) candidates per part (a galloping search over
how many units fit), so a slow formatter costs little even on a long answer.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

Measure = Callable[[str], int]

# An opening fence: up to three spaces, then three or more backticks or tildes, then an
# optional info string (whose first word is the language). CommonMark's rule, minus the
# detail that a backtick fence's info string may not contain backticks.
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})[ \t]*([^\n]*?)[ \t]*$")
_BLANK = re.compile(r"^[ \t]*$")


@dataclass(frozen=True, slots=True)
class Block:
    """A top-level piece of a Markdown text: a paragraph-ish run of lines, or a fenced code
    block (`fence` is its opening marker, e.g. "```", and `info` its info string)."""

    text: str  # for code: the body only, without fences
    fence: str | None = None
    info: str = ""
    indent: str = ""
    # What separated it from the previous block in the source: a blank line or not.
    after_blank: bool = True

    @property
    def is_code(self) -> bool:
        return self.fence is not None

    @property
    def language(self) -> str:
        return self.info.split(maxsplit=1)[0] if self.info else ""

    def render(self) -> str:
        if self.fence is None:
            return self.text
        return fenced(self.text, self.fence, self.info, self.indent)


def fenced(body: str, fence: str = "```", info: str = "", indent: str = "") -> str:
    """A code block: `body` between an opening fence (with its info string) and a closing one."""
    inner = f"{body}\n" if body else ""
    return f"{indent}{fence}{info}\n{inner}{indent}{fence}"


def parse_blocks(text: str) -> list[Block]:
    """Cut Markdown into blocks: fenced code blocks, and paragraphs separated by blank
    lines. An unclosed fence runs to the end of the text (as CommonMark says), which is
    what a model's answer cut off mid-block looks like."""
    blocks: list[Block] = []
    lines = text.replace("\r\n", "\n").split("\n")
    para: list[str] = []
    blank_before = True
    i = 0

    def flush() -> None:
        nonlocal blank_before
        if para:
            blocks.append(Block("\n".join(para), after_blank=blank_before))
            para.clear()
            blank_before = False

    while i < len(lines):
        line = lines[i]
        opening = _FENCE.match(line)
        if opening and not (opening.group(2)[0] == "`" and "`" in opening.group(3)):
            flush()
            indent, fence, info = opening.group(1), opening.group(2), opening.group(3)
            body: list[str] = []
            i += 1
            while i < len(lines) and not _closes(lines[i], fence):
                body.append(_dedent(lines[i], len(indent)))
                i += 1
            blocks.append(Block("\n".join(body), fence, info, indent, after_blank=blank_before))
            blank_before = False
            i += 1  # past the closing fence (or the end)
            continue
        if _BLANK.match(line):
            flush()
            blank_before = True
        else:
            para.append(line)
        i += 1
    flush()
    return blocks


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return (
        len(line) - len(line.lstrip(" ")) <= 3
        and len(stripped) >= len(fence)
        and set(stripped) == {fence[0]}
    )


def _dedent(line: str, width: int) -> str:
    """CommonMark strips up to the opening fence's indentation from each body line."""
    n = 0
    while n < width and n < len(line) and line[n] == " ":
        n += 1
    return line[n:]


def split_markdown(text: str, limit: int, *, measure: Measure = len) -> list[str]:
    """`text` as Markdown parts with `measure(part) <= limit` each, cut at the coarsest
    boundary possible (block, line, word, character), code blocks kept whole when they fit
    and otherwise re-fenced piece by piece. Parts are stripped of surrounding blank lines;
    an empty or blank text gives no parts."""
    if limit < 1:
        raise ValueError("limit must be positive")
    blocks = parse_blocks(text)
    units = [(("\n\n" if b.after_blank else "\n"), b) for b in blocks]
    parts: list[str] = []
    _pack(
        [(sep, b.render()) for sep, b in units],
        limit,
        measure,
        lambda index: _split_block(blocks[index], limit, measure),
        parts,
    )
    return [p for p in (part.strip("\n") for part in parts) if p.strip()]


def split_formatted(
    text: str, limit: int, format: Callable[[str], str], *, measure: Measure = len
) -> list[str]:
    """`text` split as Markdown and each part converted by `format` (Markdown to the
    platform's markup), with `measure(format(part)) <= limit` for every part: what an
    adapter's `format` returns."""
    parts = split_markdown(text, limit, measure=lambda md: measure(format(md)))
    return [format(part) for part in parts]


def split_text(text: str, limit: int, *, measure: Measure = len) -> list[str]:
    """Plain text (no Markdown meaning) cut at lines, then words, then characters."""
    return _split_plain(text, limit, measure, level=0)


def _split_block(block: Block, limit: int, measure: Measure) -> list[str]:
    if block.fence is None:
        return _split_plain(block.text, limit, measure, level=0)
    return _split_code(block, limit, measure)


_LEVELS = ("\n", " ", "")


def _split_plain(text: str, limit: int, measure: Measure, level: int) -> list[str]:
    """A run of text that does not fit, cut at lines (level 0), words (1) or characters (2)."""
    sep = _LEVELS[level]
    if not sep:
        return _split_chars(text, limit, measure)
    pieces = text.split(sep)
    parts: list[str] = []
    _pack(
        [(sep, p) for p in pieces],
        limit,
        measure,
        lambda index: _split_plain(pieces[index], limit, measure, level + 1),
        parts,
        finish=_unfence if level else _same,
    )
    return parts


def _same(text: str) -> str:
    return text


def _unfence(text: str) -> str:
    """A part cut out of the middle of a line may begin with what reads as a code fence
    ("```py and so on"); a backslash keeps it text, as it was in the source."""
    opening = _FENCE.match(text.split("\n", 1)[0])
    if opening is None:
        return text
    at = opening.start(2)
    return f"{text[:at]}\\{text[at:]}"


def _split_chars(text: str, limit: int, measure: Measure) -> list[str]:
    parts: list[str] = []
    start = 0
    while start < len(text):

        def fits(k: int, start: int = start) -> bool:
            return measure(_unfence(text[start : start + k])) <= limit

        size = _largest_fit(
            fits, len(text) - start, guess=_char_guess(fits, len(text) - start, limit)
        )
        if size == 0:
            raise ValueError(f"limit {limit} is too small for a single character")
        parts.append(_unfence(text[start : start + size]))
        start += size
    return parts


def _split_code(block: Block, limit: int, measure: Measure) -> list[str]:
    """A code block longer than a message: cut between lines, each piece fenced again."""
    fence, indent = block.fence or "```", block.indent
    # The whole info string if it leaves room, else the language alone, else nothing.
    for info in (block.info, block.language, ""):
        if measure(fenced("x", fence, info, indent)) <= limit:
            break
    else:
        raise ValueError(f"limit {limit} is too small for a fenced code block")

    def wrap(body: str) -> str:
        return fenced(body, fence, info, indent)

    lines = block.text.split("\n")
    overhead = measure(wrap(""))
    # Each line's share of a part (its text and its newline), for a first guess.
    costs = _prefix(measure(wrap(line)) - overhead + 1 for line in lines)
    parts: list[str] = []
    i = 0
    while i < len(lines):

        def fits_lines(k: int, i: int = i) -> bool:
            return measure(wrap("\n".join(lines[i : i + k]))) <= limit

        guess = _guess(costs, i, limit - overhead + 1)
        count = _largest_fit(fits_lines, len(lines) - i, guess=guess)
        if count:
            parts.append(wrap("\n".join(lines[i : i + count])))
            i += count
            continue
        # One line longer than a message: cut it between characters, each piece fenced.
        line = lines[i]
        start = 0
        while start < len(line):

            def fits(k: int, start: int = start, line: str = line) -> bool:
                return measure(wrap(line[start : start + k])) <= limit

            size = _largest_fit(
                fits, len(line) - start, guess=_char_guess(fits, len(line) - start, limit)
            )
            if size == 0:
                raise ValueError(f"limit {limit} is too small for a fenced code block")
            # A piece of a line must not read as the closing fence ("x```" cut after "x").
            while size > 1 and _closes(line[start : start + size], fence):
                size -= 1
            parts.append(wrap(line[start : start + size]))
            start += size
        i += 1
    return parts


def _pack(
    units: Sequence[tuple[str, str]],
    limit: int,
    measure: Measure,
    split_unit: Callable[[int], list[str]],
    out: list[str],
    *,
    finish: Callable[[str], str] = _same,
) -> None:
    """Greedy packing: each part takes as many whole units (each with the separator that
    preceded it) as fit; a unit too big on its own is handed to `split_unit`."""
    # Sizes in characters, scaled by how much formatting grew the previous part, make a
    # first guess at how many units fit; `measure` then decides.
    raw = _prefix(len(sep) + len(text) for sep, text in units)
    growth: float | None = None
    i = 0
    while i < len(units):
        first = finish(units[i][1])
        # A unit many times the limit is not formatted whole just to learn it is too big.
        if len(first) > 4 * limit and measure(first[: 2 * limit]) > limit:
            alone = limit + 1
        else:
            alone = measure(first)
        if alone > limit:
            out.extend(split_unit(i))
            i += 1
            continue
        if growth is None and first:
            growth = max(alone / len(first), 0.5)
        sizes: dict[int, int] = {1: alone}

        def fits(k: int, start: int = i, sizes: dict[int, int] = sizes) -> bool:
            sizes[k] = measure(finish(_join(units[start : start + k])))
            return sizes[k] <= limit

        guess = _guess(raw, i, int(limit / (growth or 1.0)) + len(units[i][0]))
        count = max(1, _largest_fit(fits, len(units) - i, known=1, guess=guess))
        part = finish(_join(units[i : i + count]))
        out.append(part)
        if count > 1 and count in sizes:
            growth = max(sizes[count] / len(part), 0.5)
        i += count


def _prefix(costs: Iterable[int]) -> list[int]:
    return list(itertools.accumulate(costs, initial=0))


def _guess(prefix: list[int], start: int, budget: int) -> int:
    """How many units from `start` fit in `budget` if sizes simply added up: a first guess
    that usually spares the search all but two calls of `measure`."""
    return bisect.bisect_right(prefix, prefix[start] + budget) - 1 - start


def _join(units: Sequence[tuple[str, str]]) -> str:
    if not units:
        return ""
    return units[0][1] + "".join(sep + text for sep, text in units[1:])


def _char_guess(fits: Callable[[int], bool], most: int, limit: int) -> int:
    """A first guess at how many characters fit: `limit` of them, if every character
    measured one (it rarely measures less), else a share of `most`."""
    return min(most, limit) if fits(min(most, limit)) else max(1, min(most, limit) // 2)


def _largest_fit(
    fits: Callable[[int], bool], most: int, *, known: int = 0, guess: int | None = None
) -> int:
    """The largest k in [known, most] with fits(k): first the guess, then galloping up
    from what fits, then bisecting; assumes that fits is (roughly) monotone and that
    fits(known) holds. The answer always fits (or is `known`)."""
    good = known
    bad = most + 1
    if guess is not None and known < guess <= most:
        if fits(guess):
            good = guess
        else:
            bad = guess
    step = 1
    while bad == most + 1 and good < most:
        probe = min(good + step, most)
        if fits(probe):
            good = probe
            step *= 2
        else:
            bad = probe
    while bad - good > 1:
        middle = (good + bad) // 2
        if fits(middle):
            good = middle
        else:
            bad = middle
    return good
