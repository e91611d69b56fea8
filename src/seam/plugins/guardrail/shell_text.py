"""Shell commands as data (`Script`: pipelines of `Simple` commands with their
`Redirect`s), bash's rules for text (C escapes, brace expansion, literal quoting), and the
CPU `Clock` that bounds reading them."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from itertools import pairwise

REDIRECTS = frozenset({"&>>", "<<<", "<<-", "&>", "<<", "<>", "<&", ">>", ">&", ">|", "<", ">"})
_PIPES = frozenset({"|", "|&"})
_C_ESCAPES = {
    "n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
    "e": "\x1b", "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_C_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|.)")


@dataclass(frozen=True, slots=True)
class Redirect:
    op: str  # ">", ">>", "<<", "<<<", ">&", ...
    target: str  # file, fd number, or here-document delimiter
    body: str = ""  # the here-document text
    shown: str = ""  # as written, e.g. "2>/dev/null" or "<<'EOF'" (quoting that matters kept)


@dataclass(frozen=True, slots=True)
class Simple:
    """One simple command: `NAME=v cmd arg... <redirections>`, quoting already resolved."""

    words: tuple[str, ...]
    assignments: tuple[str, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    # The command as written, minus here-document bodies, with quoting normalised: literal
    # text single-quoted (or bare), expansions as written. Empty when built by hand.
    shown: str = ""
    # The words holding an expansion the shell performs (`$x`, `$(...)`, not `'$1'`).
    # None when unknown (built by hand): then every word with a `$` counts.
    expanding: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class Pipeline:
    stages: tuple[Simple, ...]
    separator: str = ""  # what follows it: ";", "&&", "||", "&" or "" at the end


@dataclass(frozen=True, slots=True)
class Script:
    pipelines: tuple[Pipeline, ...]
    # Bodies of $(...), `...`, <(...) and >(...) found outside single quotes: they run too.
    substitutions: tuple[str, ...]
    problem: str = ""  # why the text is not valid shell (e.g. an unclosed quote)
    # It has loops, conditionals, groups or functions, which the pipelines do not show.
    compound: bool = False
    # The first construct that evaluates text as code (arithmetic on names, `${x@P}`,
    # a function definition, `[[ -v ]]`), as a reason; "" when there is none.
    evaluates: str = ""


def decode_c_escapes(text: str) -> str:
    """Bash's `$'...'` (and `echo -e` / `printf`) backslash escapes."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        head = code[0]
        if head in "xuU" and len(code) > 1:
            value = int(code[1:], 16)
            return chr(value) if value <= 0x10FFFF else ""
        if head in "01234567":
            return chr(int(code, 8))
        return _C_ESCAPES.get(code, "\\" + code)

    return _C_ESCAPE.sub(one, text)


def expand_braces(word: str, limit: int = 64) -> list[str]:
    """Bash brace expansion of comma lists (`{rm,-rf,/}`, `a{b,c{d,e}}`), at most `limit`
    words; `${...}` is a parameter, not a brace, and empty results are dropped."""
    start = word.find("{")
    while start >= 0:
        if start and word[start - 1] == "$":
            start = word.find("{", start + 1)
            continue
        depth = 0
        commas: list[int] = []
        for i in range(start, len(word)):
            if word[i] == "{":
                depth += 1
            elif word[i] == "," and depth == 1:
                commas.append(i)
            elif word[i] == "}":
                depth -= 1
                if depth == 0:
                    if not commas:
                        break
                    bounds = [start, *commas, i]
                    out: list[str] = []
                    for a, b in pairwise(bounds):
                        variant = word[:start] + word[a + 1 : b] + word[i + 1 :]
                        out.extend(w for w in expand_braces(variant, limit - len(out)) if w)
                        if len(out) >= limit:
                            return out[:limit]
                    return out
        start = word.find("{", start + 1)
    return [word]


_SHOWN_BARE = re.compile(r"[\w@%+=:,./-]+")


def quote_literal(text: str) -> str:
    """Quote text that must stay literal (no expansion, no globbing)."""
    return text if _SHOWN_BARE.fullmatch(text) else "'" + text.replace("'", "'\\''") + "'"


# --- tree-sitter --------------------------------------------------------------------------


class OverBudget(Exception):
    """The analysis would cost more than its budget: the command needs approval."""


class Clock:
    """A deadline in the thread's CPU time, checked cheaply. Reading the CPU clock is a
    system call (several microseconds, often more than the rest of a check); the wall
    clock is not, and CPU time cannot pass faster than wall time, so the CPU clock is
    read only once the wall clock says the deadline could have been reached."""

    __slots__ = ("deadline", "wall")

    def __init__(self, deadline: float, now: float | None = None) -> None:
        self.deadline = deadline  # a `time.thread_time()` value
        cpu_now = time.thread_time() if now is None else now
        self.wall = time.perf_counter() + max(0.0, deadline - cpu_now)

    @classmethod
    def after(cls, budget: float) -> Clock:
        now = time.thread_time()
        return cls(now + budget, now)

    def past(self) -> bool:
        if time.perf_counter() <= self.wall:
            return False
        now = time.thread_time()
        if now > self.deadline:
            return True
        self.wall = time.perf_counter() + (self.deadline - now)
        return False
