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
from functools import cache

import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Tree

from seam.plugins.guardrail.evaluation import EVALUATING, evaluation
from seam.plugins.guardrail.shell_reader import Reader
from seam.plugins.guardrail.shell_text import (
    REDIRECTS,
    Clock,
    OverBudget,
    Pipeline,
    Redirect,
    Script,
    Simple,
    decode_c_escapes,
    expand_braces,
    quote_literal,
)

__all__ = [
    "REDIRECTS",
    "Clock",
    "OverBudget",
    "Pipeline",
    "Redirect",
    "Script",
    "Simple",
    "decode_c_escapes",
    "expand_braces",
    "parse",
    "quote_literal",
]

_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_BRACE_WORD = re.compile(r"(^|[\s;&|(])\{(?=[^\s}])")
PARSE_BUDGET = 0.010  # seconds of CPU one parse may take when the caller gives no deadline
_CHUNK = 4096  # bytes handed to the parser at a time; each hand-over checks the deadline


@cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_bash.language()))


def _substitutions(reader: Reader, root: Node) -> tuple[list[str], str]:
    """The bodies of the outermost `$(...)`, backticks and `<(...)`/`>(...)` (they run),
    and the first construct outside them that evaluates code (see `evaluation.py`)."""
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


def _skipped(reader: Reader, root: Node) -> str:
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


_NON_ASCII = re.compile(rb"[\x80-\xff]")


def _ascii_shape(source: bytes) -> bytes:
    """`source` with every byte past ASCII made `x`, for the grammar only. Bash's syntax
    is all ASCII (blanks, operators, quotes), so a multi-byte character is word text
    either way and the tree's shape and byte offsets are unchanged; words are read from
    the real bytes. The grammar's scanner can crash the process on some multi-byte
    input (`{` then a 4-byte character: a segfault the fuzz suite found), which a
    hostile command must never be able to do."""
    return _NON_ASCII.sub(b"x", source)


def _parse(source: bytes, deadline: Clock) -> Tree:
    """Parse within the deadline: the source is handed over in chunks, and running out of
    time ends it (some inputs make the grammar's scanner very slow)."""
    shaped = _ascii_shape(source)

    def read(offset: int, _point: object) -> bytes:
        if deadline.past():
            raise OverBudget("the command takes too long to parse")
        return shaped[offset : offset + _CHUNK]

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
    reader = Reader(source, deadline)
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
