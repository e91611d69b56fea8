"""Shell commands as data: bash parsed by tree-sitter's bash grammar, flattened for judging.

The guard judges what would run, so it reads the command with a real shell parser
(tree-sitter with `tree-sitter-bash`, as OpenAI's Codex CLI does) and never guesses:
broken or unsupported syntax is reported in `Script.problem`, so the classifier can
refuse to call it safe. The tree is flattened into pipelines of simple commands with
quoting resolved (`'r''m'` is `rm`, `$'\\x72m'` is `rm`), redirections and
here-documents kept, and the bodies of `$(...)`, backticks and `<(...)` collected as
scripts to judge in turn. Nothing is expanded or run here.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import cache
from itertools import pairwise

import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Tree

from seam.plugins.guardrail.evaluation import EVALUATING, evaluation

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

# Statements: each becomes simple commands (or, for compound ones, the statements inside).
_CONTAINERS = frozenset(
    {"program", "compound_statement", "subshell", "do_group", "if_statement", "elif_clause"}
    | {"else_clause", "while_statement", "for_statement", "c_style_for_statement"}
    | {"case_statement", "case_item", "function_definition", "negated_command"}
)
_SEPARATORS = frozenset({";", "&", "&&", "||", ";;", ";&", ";;&", "\n"})
_QUIET = frozenset({"comment", "heredoc_body", "heredoc_end", "heredoc_start"})
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_WORDLIKE = frozenset(
    {"word", "string", "raw_string", "ansi_c_string", "translated_string", "concatenation"}
    | {"simple_expansion", "expansion", "command_substitution", "process_substitution"}
    | {"arithmetic_expansion", "number", "brace_expression", "extglob_pattern"}
)
_DOUBLE_QUOTE_ESCAPE = re.compile(r"\\([\"\\$`\n])")
_BRACE_WORD = re.compile(r"(^|[\s;&|(])\{(?=[^\s}])")
_BARE_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


PARSE_BUDGET = 0.010  # seconds of CPU one parse may take when the caller gives no deadline
_CHUNK = 4096  # bytes handed to the parser at a time; each hand-over checks the deadline
_CHECK_EVERY = 256  # nodes walked between deadline checks


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


@cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_bash.language()))


class _Reader:
    """One walk over a parse tree: simple commands and separators, in order."""

    def __init__(self, source: bytes, deadline: Clock) -> None:
        self.source = source
        self.items: list[Simple | str] = []
        self.problem = ""
        self.deadline = deadline
        self.walked = 0
        self.compound = False  # loops, conditionals, groups, functions: not a flat list

    def spend(self) -> None:
        self.walked += 1
        if self.walked % _CHECK_EVERY == 0 and self.deadline.past():
            raise OverBudget("the command is too large to read in time")

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def fail(self, problem: str) -> None:
        self.problem = self.problem or problem

    def statements(self, node: Node) -> None:
        """The statements among a node's children, separated as the shell would."""
        first = True
        for child in node.children:
            kind = child.type
            if not child.is_named:
                if kind in _SEPARATORS:
                    self.items.append(kind if kind in ("&&", "||", "&") else ";")
                continue
            skipped = kind in _QUIET or kind in _WORDLIKE or kind.endswith("_expression")
            if skipped or kind in ("variable_name", "test_operator"):
                # A loop's words, a case pattern, arithmetic: not commands (the
                # substitutions inside them are found and judged anyway).
                continue
            if not first:
                self.items.append(";")
            first = False
            self.statement(child)

    def statement(self, node: Node) -> None:
        self.spend()
        kind = node.type
        if kind == "command":
            self.command(node, ())
        elif kind == "redirected_statement":
            self.redirected(node)
        elif kind == "pipeline":
            first = True
            for child in node.children:
                if child.is_named:
                    if not first:
                        self.items.append("|")
                    first = False
                    self.statement(child)
        elif kind == "list":
            for child in node.children:
                if child.is_named:
                    self.statement(child)
                elif child.type in ("&&", "||"):
                    self.items.append(child.type)
        elif kind in ("variable_assignment", "variable_assignments"):
            assignments = (node,) if kind == "variable_assignment" else tuple(node.named_children)
            values = tuple(self.assignment(a) for a in assignments)
            self.items.append(Simple((), values, (), " ".join(map(quote_literal, values))))
        elif kind in ("declaration_command", "unset_command"):
            words = [self.text(node.children[0])]
            for child in node.children[1:]:
                if child.type == "variable_assignment":
                    words.append(self.assignment(child))
                elif child.is_named:
                    words.extend(self.words([child]))
            self.items.append(Simple(tuple(words), (), (), " ".join(map(_show, words))))
        elif kind == "test_command":
            self.items.append(Simple(("[[",), (), (), self.text(node)))
        elif kind in _CONTAINERS:
            self.compound = True
            self.statements(node)
        elif kind == "comment":
            return
        elif kind == "ERROR" or node.is_missing:
            self.fail(f"cannot parse {self.text(node)[:40]!r}")
        else:
            self.fail(f"unsupported shell syntax ({kind})")

    def redirected(self, node: Node) -> None:
        body = node.child_by_field_name("body")
        redirects: list[Redirect] = []
        tail: list[Node] = []
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) == "redirect" or child.type.endswith("_redirect"):
                redirects.extend(self.redirect(child, tail))
        shown = " ".join(r.shown for r in redirects)
        if body is None:
            self.items.append(Simple((), (), tuple(redirects), shown))
        elif body.type == "command":
            self.command(body, tuple(redirects))
        else:
            # `a && b 2>&1 | c`: the grammar hangs the redirection on the whole list, bash
            # on its last command (so does a group's: `{ a; b; } > f`); attach it there.
            self.statement(body)
            last = self.items[-1] if self.items else None
            if isinstance(last, Simple):
                merged = (*last.redirects, *redirects)
                self.items[-1] = Simple(
                    last.words, last.assignments, merged, f"{last.shown} {shown}".strip()
                )
            else:
                self.items.append(Simple((), (), tuple(redirects), shown))
        self.tail(tail)

    def tail(self, nodes: list[Node]) -> None:
        """What follows a here-document's delimiter on its line (`cat <<EOF | sh`): the
        grammar hangs it under the redirection, the shell runs it after the command."""
        for node in nodes:
            if node.is_named:
                self.statement(node)
            elif node.type in ("|", "|&"):
                self.items.append("|")
            elif node.type in _SEPARATORS:
                self.items.append(node.type if node.type in ("&&", "||", "&") else ";")

    def command(self, node: Node, outer: tuple[Redirect, ...]) -> None:
        assignments: list[str] = []
        redirects: list[Redirect] = []
        parts: list[Node] = []
        tail: list[Node] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                assignments.append(self.assignment(child))
            elif kind.endswith("_redirect"):
                redirects.extend(self.redirect(child, tail))
            elif kind == "command_name":
                parts.extend(child.children)
            elif kind == "comment":
                continue
            elif kind == "ERROR":
                self.fail(f"cannot parse {self.text(child)[:40]!r}")
            else:
                parts.append(child)
        words = self.words(parts)
        all_redirects = (*redirects, *outer)
        shown = " ".join(
            [*(quote_literal(a) for a in assignments), *(_show(w) for w in words)]
            + [r.shown for r in all_redirects]
        )
        expanding = frozenset(self.expanding(parts))
        simple = Simple(tuple(words), tuple(assignments), all_redirects, shown, expanding)
        self.items.append(simple)
        self.tail(tail)

    def assignment(self, node: Node) -> str:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        head = self.text(node)
        if name is None:
            return head
        op = "+=" if "+=" in head[: head.find("=") + 1] else "="
        text = self.text(name) + op
        return text + (self.word(value)[0] if value is not None else "")

    def words(self, parts: list[Node]) -> list[str]:
        """Adjacent nodes (no space between them) form one word, as in the shell."""
        out: list[str] = []
        group: list[Node] = []
        for part in parts:
            if group and part.start_byte != group[-1].end_byte:
                out.extend(self.joined(group))
                group = []
            group.append(part)
        if group:
            out.extend(self.joined(group))
        return out

    def expanding(self, parts: list[Node]) -> list[str]:
        """The words (as `words` gives them) in which the shell expands something."""
        out: list[str] = []
        group: list[Node] = []
        for part in [*parts, None]:
            if part is None or (group and part.start_byte != group[-1].end_byte):
                if any(_expands(n) for n in group):
                    out.extend(self.joined(group))
                group = []
            if part is not None:
                group.append(part)
        return out

    def joined(self, group: list[Node]) -> list[str]:
        texts: list[str] = []
        braces = False
        for i, node in enumerate(group):
            if node.type == "$" and i + 1 < len(group):  # $"..." is a plain double quote
                continue
            text, quoted = self.word(node)
            braces = braces or (not quoted and "{" in text and "," in text)
            texts.append(text)
        joined = "".join(texts)
        return [w for w in expand_braces(joined)] if braces else [joined]

    def word(self, node: Node) -> tuple[str, bool]:
        """A word's text with quoting resolved; expansions are kept as written."""
        kind = node.type
        raw = self.text(node)
        if kind == "word":
            # Unquoted even when escaped: `\{a,b}` is judged as if it expanded (stricter).
            return _BARE_ESCAPE.sub(r"\1", raw.replace("\\\n", "")), False
        if kind == "raw_string":
            return raw[1:-1], True
        if kind == "ansi_c_string":
            return decode_c_escapes(raw[2:-1]), True
        if kind in ("string", "translated_string"):
            out: list[str] = []
            for child in node.named_children:
                piece = self.text(child)
                if child.type == "string_content":
                    piece = _DOUBLE_QUOTE_ESCAPE.sub(
                        lambda m: "" if m.group(1) == "\n" else m.group(1), piece
                    )
                out.append(piece)
            # Text between named children (spaces before an expansion) is kept too.
            return _string_text(self, node, out), True
        if kind == "concatenation":
            texts = [self.word(c) for c in node.children]
            return "".join(t for t, _ in texts), any(q for _, q in texts)
        return raw, False

    def redirect(self, node: Node, tail: list[Node]) -> list[Redirect]:
        kind = node.type
        if kind == "heredoc_redirect":
            return self.heredoc(node, tail)
        op = ""
        fd = ""
        targets: list[Node] = []
        for child in node.children:
            if child.type == "file_descriptor":
                fd = self.text(child)
            elif not child.is_named:
                op = op or child.type
            else:
                targets.append(child)
        target = " ".join(self.words(targets))
        if kind == "herestring_redirect":
            op = "<<<"
        return [Redirect(op, target, "", f"{fd}{op}{_show(target)}")]

    def heredoc(self, node: Node, tail: list[Node]) -> list[Redirect]:
        op = "<<"
        delimiter = ""
        quoted = False
        body = ""
        found: list[Redirect] = []
        for child in node.children:
            kind = child.type
            if kind in ("<<", "<<-"):
                op = kind
            elif kind == "heredoc_start":
                raw = self.text(child)
                quoted = any(c in raw for c in "'\"\\")
                delimiter = raw.replace("'", "").replace('"', "").replace("\\", "")
            elif kind == "heredoc_body":
                body = self.text(child).removesuffix("\n")
                if op == "<<-":
                    body = "\n".join(line.lstrip("\t") for line in body.split("\n"))
            elif kind == "heredoc_end":
                continue
            elif kind.endswith("_redirect"):
                found.extend(self.redirect(child, tail))
            else:
                tail.append(child)
        shown = f"{op}'{delimiter}'" if quoted else f"{op}{delimiter}"
        return [Redirect(op, delimiter, body, shown), *found]


_EXPANSIONS = frozenset(
    {"simple_expansion", "expansion", "command_substitution", "process_substitution"}
    | {"arithmetic_expansion"}
)


def _expands(node: Node) -> bool:
    if node.type in _EXPANSIONS:
        return True
    if node.type in ("raw_string", "ansi_c_string", "word"):
        return False
    return any(_expands(child) for child in node.children)


def _string_text(reader: _Reader, node: Node, pieces: list[str]) -> str:
    """A double-quoted string's contents: its children, with the text between them."""
    out: list[str] = []
    position = node.start_byte + 1
    named = iter(pieces)
    for child in node.children:
        if not child.is_named:
            continue
        if child.start_byte > position:
            out.append(reader.source[position : child.start_byte].decode("utf-8", "replace"))
        out.append(next(named))
        position = child.end_byte
    end = node.end_byte - 1
    if end > position:
        out.append(reader.source[position:end].decode("utf-8", "replace"))
    return "".join(out)


def _show(word: str) -> str:
    from seam.plugins.guardrail.normalize import quote

    return quote(word)


def _substitutions(reader: _Reader, root: Node) -> tuple[list[str], str]:
    """The bodies of the outermost `$(...)`, backticks and `<(...)`/`>(...)` (they run),
    and the first construct outside them that evaluates code (see `_evaluation`)."""
    found: list[str] = []
    evaluates = ""
    stack = [root]
    while stack:
        reader.spend()
        node = stack.pop()
        if node.type in _SUBSTITUTIONS and node.child_count >= 2:
            first, last = node.children[0], node.children[-1]
            inner = reader.source[first.end_byte : last.start_byte].decode("utf-8", "replace")
            if first.type == "`":
                inner = inner.replace("\\`", "`").replace("\\$", "$").replace("\\\\", "\\")
            found.append(inner)
            continue
        if not evaluates and node.type in EVALUATING:
            head = node.children[0].type if node.children else ""
            evaluates = evaluation(node.type, reader.text(node), head)
        stack.extend(reversed(node.children))
    return found, evaluates


# Nodes whose children do not cover their text (the rest is their content, not syntax).
_OPAQUE = frozenset(
    {"string", "translated_string", "heredoc_body", "raw_string", "ansi_c_string", "word"}
    | {"comment", "heredoc_content", "string_content", "regex", "extglob_pattern", "number"}
    | {"heredoc_start", "heredoc_end", "arithmetic_expansion", "test_operator"}
)
_GAP = re.compile(rb"(?:[ \t\r\n]|\\\n)*")


def _skipped(reader: _Reader, root: Node) -> str:
    """Text the grammar accepted without a node for it (it drops some words, e.g. the `-`
    of `python3 - <<EOF`): what is not in the tree cannot be judged, so it is a problem."""
    source = reader.source
    stack = [root]
    while stack:
        reader.spend()
        node = stack.pop()
        if node.type in _OPAQUE or node.type.endswith("_expression") or not node.children:
            continue
        position = node.start_byte
        for child in node.children:
            if child.start_byte > position and not _GAP.fullmatch(
                source, position, child.start_byte
            ):
                return source[position : child.start_byte].decode("utf-8", "replace").strip()
            position = max(position, child.end_byte)
            stack.append(child)
        tail_gap = node is not root and node.end_byte > position
        if tail_gap and not _GAP.fullmatch(source, position, node.end_byte):
            return source[position : node.end_byte].decode("utf-8", "replace").strip()
    return ""


def _parse(source: bytes, deadline: Clock) -> Tree:
    """Parse within the deadline: the source is handed over in chunks, and running out of
    time ends it (some inputs make the grammar's scanner very slow)."""

    def read(offset: int, _point: object) -> bytes:
        if deadline.past():
            raise OverBudget("the command takes too long to parse")
        return source[offset : offset + _CHUNK]

    out_of_time = False

    def guarded(offset: int, point: object) -> bytes:
        nonlocal out_of_time
        try:
            return read(offset, point)
        except OverBudget:
            out_of_time = True
            return b""

    parser = _parser()
    # The parser is shared; without a reset a parse could start from what the last one
    # left (one cut short by the deadline, or one that ended in errors) and crash the
    # process: a segfault the fuzz suite found (tests/fuzz/test_fuzz_guard.py).
    parser.reset()
    tree = parser.parse(guarded)
    if out_of_time:
        raise OverBudget("the command takes too long to parse")
    return tree


def parse(text: str, *, deadline: float | Clock | None = None) -> Script:
    """The script's pipelines of simple commands, the substitutions it runs, and what (if
    anything) made it unreadable. `deadline` (a `time.thread_time()` value, or a `Clock`)
    bounds the work; past it, `OverBudget` is raised."""
    if deadline is None:
        deadline = Clock.after(PARSE_BUDGET)
    elif not isinstance(deadline, Clock):
        deadline = Clock(deadline)
    source = text.encode("utf-8", "surrogatepass")
    tree = _parse(source, deadline)
    if tree.root_node.has_error and _BRACE_WORD.search(text):
        # bash reads `{rm,-rf,/}` as a word (brace expansion); the grammar as a group.
        source = _BRACE_WORD.sub(lambda m: m.group(1) + "\\{", text).encode(
            "utf-8", "surrogatepass"
        )
        tree = _parse(source, deadline)
    reader = _Reader(source, deadline)
    root = tree.root_node
    try:
        reader.statements(root)
    except RecursionError:
        reader.fail("nested too deeply to read")
    if root.has_error and not reader.problem:
        reader.fail("the shell grammar does not accept it")
    if not reader.problem and (lost := _skipped(reader, root)):
        reader.fail(f"the parser skipped {lost[:40]!r}")
    pipelines = _pipelines(reader.items)
    found, evaluates = _substitutions(reader, root)
    return Script(pipelines, tuple(found), reader.problem, reader.compound, evaluates)


def _pipelines(items: list[Simple | str]) -> tuple[Pipeline, ...]:
    pipelines: list[Pipeline] = []
    stages: list[Simple] = []
    for item in items:
        if isinstance(item, Simple):
            stages.append(item)
        elif item == "|":
            continue
        else:
            if stages:
                pipelines.append(Pipeline(tuple(stages), item))
                stages = []
            elif pipelines and item != ";":
                last = pipelines[-1]
                pipelines[-1] = Pipeline(last.stages, item)
    if stages:
        pipelines.append(Pipeline(tuple(stages), ""))
    return tuple(pipelines)
