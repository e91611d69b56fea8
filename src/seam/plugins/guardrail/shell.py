"""A small POSIX/bash lexer and parser: enough of the shell grammar to see what would run.

`shlex` resolves quoting but cannot tell `'$(x)'` (text) from `"$(x)"` (a command that
runs), does not know operators, redirections, here-documents or `$'\\x72m'`. This reads
the same way bash does for those, and nothing more: it never expands globs or runs
anything. Unknown or broken syntax is reported in `Script.problem`, never guessed away,
so the classifier can refuse to call it safe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

# Runs of characters with no special meaning, consumed in one step (the lexer's hot path).
_PLAIN = re.compile(r"[^\s'\"\\$`;&|()<>#]+")
_DOUBLE_QUOTED_PLAIN = re.compile(r'[^\\$`"]+')
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
# Longest first, so `&&` is not read as two `&`.
_OPERATORS = (
    ";;&", "&>>", "<<<", "<<-", "&&", "||", ";;", ";&", "|&", "&>", "<<", "<>", "<&", ">>",
    ">&", ">|", ";", "|", "&", "(", ")", "<", ">",
)  # fmt: skip
REDIRECTS = frozenset({"&>>", "<<<", "<<-", "&>", "<<", "<>", "<&", ">>", ">&", ">|", "<", ">"})
_PIPES = frozenset({"|", "|&"})
_GROUPING = frozenset({"(", ")"})
# Words that open or close a compound command: skipped where a command name is expected.
_KEYWORDS = frozenset(
    {"!", "{", "}", "then", "do", "else", "elif", "if", "while", "until", "fi", "done", "esac"}
)
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


@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    display: str
    quoted: bool
    assignment: bool
    braces: bool = False  # an unquoted `{`: brace expansion may turn it into several words


_SHOWN_BARE = re.compile(r"[\w@%+=:,./-]+")


def quote_literal(text: str) -> str:
    """Quote text that must stay literal (no expansion, no globbing)."""
    return text if _SHOWN_BARE.fullmatch(text) else "'" + text.replace("'", "'\\''") + "'"


@dataclass(slots=True)
class _Lexer:
    s: str
    i: int = 0
    tokens: list[_Word | str] = field(default_factory=list)
    subs: list[str] = field(default_factory=list)
    problem: str = ""
    expansions: int = 0  # $-expansions and backticks seen, to tell "$x" from "x"
    # Here-documents waiting for the next newline: (token index of the delimiter, strip tabs).
    pending: list[tuple[int, bool]] = field(default_factory=list)
    bodies: dict[int, str] = field(default_factory=dict)
    fds: dict[int, str] = field(default_factory=dict)  # token index of a redirection -> fd

    def fail(self, problem: str) -> None:
        if not self.problem:
            self.problem = problem

    def run(self) -> None:
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c in " \t\r":
                self.i += 1
            elif c == "\n":
                self.i += 1
                self.tokens.append(";")
                self._read_heredocs()
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end
            elif c in "<>" and s.startswith("(", self.i + 1):
                start = self.i
                end = self._skip_group(self.i + 2)
                self.subs.append(s[start + 2 : end - 1])
                self.tokens.append(_Word(s[start:end], s[start:end], False, False))
                self.i = end
            elif c in ";&|()<>":
                op = next(o for o in _OPERATORS if s.startswith(o, self.i))
                self.i += len(op)
                self.tokens.append(op)
                if op in ("<<", "<<-"):
                    self.pending.append((len(self.tokens), op == "<<-"))
            else:
                self._read_word()
        if self.pending:
            self._read_heredocs()

    def _read_word(self) -> None:
        """One word: its text with quoting resolved, and a display form that keeps what
        quoting changes the meaning of (`'$(x)'` is text, `"$(x)"` runs x)."""
        s, n = self.s, len(self.s)
        start = self.i
        parts: list[str] = []
        display: list[str] = []
        literal: list[str] = []  # quoted or escaped text waiting to be shown quoted
        quoted = False
        braces = False
        assignment = _ASSIGNMENT.match(s, start) is not None

        def shown(raw: str) -> None:
            if literal:
                display.append(quote_literal("".join(literal)))
                literal.clear()
            display.append(raw)

        while self.i < n:
            plain = _PLAIN.match(s, self.i)
            if plain:
                parts.append(plain.group())
                shown(plain.group())
                braces = braces or "{" in plain.group()
                self.i = plain.end()
                continue
            c = s[self.i]
            if c in " \t\r\n;&|()":
                break
            if c in "<>":
                # `2>file`: a number glued to a redirection is its file descriptor.
                if not quoted and "".join(parts).isdigit():
                    self.fds[len(self.tokens)] = "".join(parts)
                    return
                break
            before, count, expansions = self.i, len(parts), self.expansions
            if c == "#":  # only starts a comment at the start of a word
                parts.append(c)
                self.i += 1
            elif c == "\\":
                nxt = s[self.i + 1 : self.i + 2]
                if nxt != "\n":  # a backslash-newline joins lines and leaves nothing
                    parts.append(nxt)
                    quoted = True
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    self.fail("unclosed single quote")
                    end = n
                parts.append(s[self.i + 1 : end])
                self.i = end + 1
                quoted = True
            elif c == '"':
                self.i = self._double_quoted(self.i + 1, parts, terminator='"')
                quoted = True
            elif c == "$":
                self._dollar(parts, in_quotes=False)
                quoted = quoted or s[before + 1 : before + 2] in ("'", '"')
            else:  # backtick
                parts.append(self._backtick())
            if c == "#" or (c in "$`" and self.expansions != expansions):
                shown(s[before : self.i])
            elif c == '"' and self.expansions != expansions:
                shown(s[before : self.i])  # expansions inside double quotes: as written
            elif c == "$" and s[before + 1 : before + 2] not in ("'", '"'):
                shown("".join(parts[count:]))  # a lone $
            else:
                literal.extend(parts[count:])
        if literal:
            display.append(quote_literal("".join(literal)))
        if parts or quoted:
            text = "".join(parts)
            self.tokens.append(_Word(text, "".join(display), quoted, assignment, braces))

    def _dollar(self, parts: list[str], *, in_quotes: bool) -> None:
        s, i = self.s, self.i
        nxt = s[i + 1 : i + 2]
        if nxt == "'" and not in_quotes:
            end = i + 2
            while end < len(s) and s[end] != "'":
                end += 2 if s[end] == "\\" else 1
            if end >= len(s):
                self.fail("unclosed $'...' quote")
            parts.append(decode_c_escapes(s[i + 2 : end]))
            self.i = end + 1
        elif nxt == '"' and not in_quotes:  # $"..." (translated text): a plain double quote
            self.i = self._double_quoted(i + 2, parts, terminator='"')
        elif s.startswith("((", i + 1):  # arithmetic, not a command
            self.expansions += 1
            end = self._skip_group(i + 2)
            parts.append(s[i:end])
            self.i = end
        elif nxt == "(":
            self.expansions += 1
            end = self._skip_group(i + 2)
            self.subs.append(s[i + 2 : end - 1])
            parts.append(s[i:end])
            self.i = end
        elif nxt == "{":
            self.expansions += 1
            end = s.find("}", i + 2)
            if end < 0:
                self.fail("unclosed ${")
                end = len(s) - 1
            parts.append(s[i : end + 1])
            self.i = end + 1
        else:
            if nxt and (nxt.isalnum() or nxt in "_@*#?$!-"):
                self.expansions += 1  # $name, $1, $@, ...
            parts.append("$")
            self.i = i + 1

    def _backtick(self) -> str:
        self.expansions += 1
        s = self.s
        start = self.i
        end = start + 1
        while end < len(s) and s[end] != "`":
            end += 2 if s[end] == "\\" else 1
        if end >= len(s):
            self.fail("unclosed backtick")
        inner = s[start + 1 : end].replace("\\`", "`").replace("\\\\", "\\").replace("\\$", "$")
        self.subs.append(inner)
        self.i = end + 1
        return s[start : end + 1]

    def _double_quoted(self, i: int, parts: list[str], *, terminator: str | None) -> int:
        """Read up to the closing quote (or the end, for a here-document body)."""
        s, n = self.s, len(self.s)
        self.i = i
        while self.i < n:
            c = s[self.i]
            if c == terminator:
                return self.i + 1
            if c == "\\":
                nxt = s[self.i + 1 : self.i + 2]
                if nxt in ('"', "\\", "$", "`"):
                    parts.append(nxt)
                elif nxt != "\n":
                    parts.append("\\" + nxt)
                self.i += 2
            elif c == "$":
                self._dollar(parts, in_quotes=True)
            elif c == "`":
                parts.append(self._backtick())
            else:
                run = _DOUBLE_QUOTED_PLAIN.match(s, self.i)
                stop = run.end() if run else self.i + 1  # a lone `"` inside a here-document
                parts.append(s[self.i : stop])
                self.i = stop
        if terminator is not None:
            self.fail("unclosed double quote")
        return n

    def _skip_group(self, i: int) -> int:
        """The index just past the `)` closing a group opened before `i`, quotes respected."""
        s, n = self.s, len(self.s)
        depth = 1
        while i < n:
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c == "'":
                end = s.find("'", i + 1)
                if end < 0:
                    break
                i = end + 1
                continue
            if c == '"':
                saved = self.i, len(self.subs), self.problem
                i = self._double_quoted(i + 1, [], terminator='"')
                # Substitutions nested here are found again when the group is classified.
                self.i, self.problem = saved[0], saved[2]
                del self.subs[saved[1] :]
                continue
            if c == "`":
                end = i + 1
                while end < n and s[end] != "`":
                    end += 2 if s[end] == "\\" else 1
                i = end + 1
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        self.fail("unclosed parenthesis")
        return n + 1

    def _read_heredocs(self) -> None:
        s, n = self.s, len(self.s)
        for index, strip_tabs in self.pending:
            delimiter = self.tokens[index] if index < len(self.tokens) else None
            if not isinstance(delimiter, _Word):
                self.fail("here-document without a delimiter")
                continue
            lines: list[str] = []
            while self.i < n:
                end = s.find("\n", self.i)
                end = n if end < 0 else end
                line = s[self.i : end]
                self.i = end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter.text:
                    break
                lines.append(line)
            body = "\n".join(lines)
            self.bodies[index] = body
            if not delimiter.quoted:  # an unquoted delimiter: $(...) in the body runs
                nested = _Lexer(body)
                nested._double_quoted(0, [], terminator=None)
                self.subs.extend(nested.subs)
        self.pending.clear()


def parse(text: str) -> Script:
    lexer = _Lexer(text)
    lexer.run()
    pipelines: list[Pipeline] = []
    stages: list[Simple] = []
    words: list[str] = []
    assignments: list[str] = []
    redirects: list[Redirect] = []
    shown: list[str] = []

    def end_command() -> None:
        if words or assignments or redirects:
            stages.append(
                Simple(tuple(words), tuple(assignments), tuple(redirects), " ".join(shown))
            )
            words.clear()
            assignments.clear()
            redirects.clear()
            shown.clear()

    def end_pipeline(separator: str) -> None:
        end_command()
        if stages:
            pipelines.append(Pipeline(tuple(stages), separator))
            stages.clear()

    tokens = lexer.tokens
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if isinstance(token, _Word):
            if not words and token.assignment:
                assignments.append(token.text)
                shown.append(token.display)
            elif words or token.quoted or token.text not in _KEYWORDS:
                words.extend(expand_braces(token.text) if token.braces else (token.text,))
                shown.append(token.display)
        elif token in REDIRECTS:
            target = tokens[index] if index < len(tokens) else None
            if not isinstance(target, _Word):
                lexer.fail(f"{token} without a target")
                continue
            body = lexer.bodies.get(index)
            written = target.display
            if body is not None and target.quoted:  # <<'EOF': the body is not expanded
                written = "'" + target.text + "'"
            written = f"{lexer.fds.get(index - 1, '')}{token}{written}"
            redirects.append(Redirect(token, target.text, body or "", written))
            shown.append(written)
            index += 1
        elif token == "(" and (index < 2 or tokens[index - 2] not in _PIPES):
            # A group or a function body starts a new list; `)` only ends its last command,
            # so `(curl x) | sh` stays one pipeline.
            end_pipeline("")
        elif token in _PIPES or token in _GROUPING:
            end_command()
        else:
            end_pipeline(token)
    end_pipeline("")
    return Script(tuple(pipelines), tuple(lexer.subs), lexer.problem)
