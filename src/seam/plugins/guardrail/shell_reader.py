"""`Reader`: one walk over bash's parse tree (tree-sitter), flattening it into simple
commands and separators with quoting resolved; what each kind of statement becomes is the
table `_STATEMENTS`."""

from __future__ import annotations

import re
from collections.abc import Callable

from tree_sitter import Node

from seam.plugins.guardrail.shell_text import (
    Clock,
    OverBudget,
    Redirect,
    Simple,
    decode_c_escapes,
    expand_braces,
    quote_literal,
)

# Statements: each becomes simple commands (or, for compound ones, the statements inside).
_CONTAINERS = frozenset(
    {"program", "compound_statement", "subshell", "do_group", "if_statement", "elif_clause"}
    | {"else_clause", "while_statement", "for_statement", "c_style_for_statement"}
    | {"case_statement", "case_item", "function_definition", "negated_command"}
)
_SEPARATORS = frozenset({";", "&", "&&", "||", ";;", ";&", ";;&", "\n"})
_QUIET = frozenset({"comment", "heredoc_body", "heredoc_end", "heredoc_start"})
_WORDLIKE = frozenset(
    {"word", "string", "raw_string", "ansi_c_string", "translated_string", "concatenation"}
    | {"simple_expansion", "expansion", "command_substitution", "process_substitution"}
    | {"arithmetic_expansion", "number", "brace_expression", "extglob_pattern"}
)
_DOUBLE_QUOTE_ESCAPE = re.compile(r"\\([\"\\$`\n])")
_BARE_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_CHECK_EVERY = 256  # nodes walked between deadline checks


class Reader:
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
        read = _STATEMENTS.get(kind)
        if read is not None:
            read(self, node)
        elif kind in _CONTAINERS:
            self.compound = True
            self.statements(node)
        elif kind == "comment":
            return
        elif kind == "ERROR" or node.is_missing:
            self.fail(f"cannot parse {self.text(node)[:40]!r}")
        else:
            self.fail(f"unsupported shell syntax ({kind})")

    def plain_command(self, node: Node) -> None:
        self.command(node, ())

    def pipeline(self, node: Node) -> None:
        first = True
        for child in node.children:
            if child.is_named:
                if not first:
                    self.items.append("|")
                first = False
                self.statement(child)

    def and_or(self, node: Node) -> None:
        """`a && b || c`."""
        for child in node.children:
            if child.is_named:
                self.statement(child)
            elif child.type in ("&&", "||"):
                self.items.append(child.type)

    def assignments(self, node: Node) -> None:
        """`X=1` or `X=1 Y=2` alone: a command of assignments only."""
        one = node.type == "variable_assignment"
        values = tuple(self.assignment(a) for a in ((node,) if one else node.named_children))
        self.items.append(Simple((), values, (), " ".join(map(quote_literal, values))))

    def declaration(self, node: Node) -> None:
        """`export X=1`, `declare -a x`, `unset y`: the builtin with its words."""
        words = [self.text(node.children[0])]
        for child in node.children[1:]:
            if child.type == "variable_assignment":
                words.append(self.assignment(child))
            elif child.is_named:
                words.extend(self.words([child]))
        self.items.append(Simple(tuple(words), (), (), " ".join(map(_show, words))))

    def test(self, node: Node) -> None:
        """`[[ ... ]]`: judged as the `[[` builtin (what it evaluates is found elsewhere)."""
        self.items.append(Simple(("[[",), (), (), self.text(node)))

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


# What each kind of statement becomes (loops, groups and the like are read by `statement`).
_STATEMENTS: dict[str, Callable[[Reader, Node], None]] = {
    "command": Reader.plain_command,
    "redirected_statement": Reader.redirected,
    "pipeline": Reader.pipeline,
    "list": Reader.and_or,
    "variable_assignment": Reader.assignments,
    "variable_assignments": Reader.assignments,
    "declaration_command": Reader.declaration,
    "unset_command": Reader.declaration,
    "test_command": Reader.test,
}

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


def _string_text(reader: Reader, node: Node, pieces: list[str]) -> str:
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
