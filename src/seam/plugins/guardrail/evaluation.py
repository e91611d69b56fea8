"""Shell constructs that evaluate text as code, as the parse tree shows them.

Bash evaluates arithmetic recursively: a name's value is itself an expression, and an
array subscript in it runs the command substitutions it holds (`x='a[$(id)]'; echo
$((x))` runs `id`). So arithmetic, subscripts, `[[ -v ]]`, `[[ a -eq b ]]`, indirect and
`@` expansions (`${!ref}`, `${x@P}`) and function definitions are code the words of a
command do not show; only their plain literal forms are proven (`$((1 + 2))`, `${a[0]}`).
"""

from __future__ import annotations

import re

EVALUATING = frozenset(
    {"function_definition", "compound_statement", "c_style_for_statement", "expansion"}
    | {"arithmetic_expansion", "variable_assignment", "test_command"}
)
# Arithmetic on literal numbers only: names in arithmetic are evaluated recursively, and a
# value such as `a[$(cmd)]` runs the command.
_LITERAL_ARITHMETIC = re.compile(r"\$(?:\(\(|\[)[\d\s+*/%<>=!&|^~?:()-]*(?:\)\)|\])")
# `${name}`, `${#name}`, defaults, pattern removal and replacement, case changes and literal
# substrings; not `${!ref}`, `${x@P}`, or subscripts and offsets that are arithmetic.
_PLAIN_EXPANSION = re.compile(
    r"\$\{#?(?:[A-Za-z_]\w*|\d+|[@*#?$-])(?:\[(?:\d+|@|\*)\])?"
    r"(?:(?::?[-=+?]|##?|%%?|//?|/#|/%|\^\^?|,,?).*|:\d+(?::\d+)?)?\}",
    re.DOTALL,
)
_SUBSCRIPTED = re.compile(r"[A-Za-z_]\w*\[(?!\d+\]|@\]|\*\])")
_TEST_ARITHMETIC = re.compile(r"(\S+)\s+-(?:eq|ne|lt|le|gt|ge)\s+(\S+)")
_NUMBER = re.compile(r"[\"']?-?\d+[\"']?")


def evaluation(kind: str, text: str, first: str) -> str:
    """Why a node of the parse tree (its type, its text, the type of its first child)
    evaluates code its words do not show, or "" when it does not."""
    if kind == "function_definition":
        return "defines a function (a later word may call it)"
    if kind == "c_style_for_statement":
        return "an arithmetic for loop evaluates names"
    if kind == "compound_statement":
        return "an arithmetic command (( )) evaluates names" if first == "((" else ""
    if kind == "arithmetic_expansion":
        plain = _LITERAL_ARITHMETIC.fullmatch(text) is not None
        return "" if plain else "arithmetic expansion evaluates names and subscripts"
    if kind == "expansion":
        plain = _PLAIN_EXPANSION.fullmatch(text) is not None
        return "" if plain else f"the expansion {text[:30]} evaluates (indirection, @, offsets)"
    if kind == "variable_assignment":
        name = text.partition("=")[0]
        return "an assignment to a computed subscript" if _SUBSCRIPTED.match(name) else ""
    # [[ ]]: -v evaluates a subscript; -eq and friends evaluate both sides as arithmetic.
    if re.search(r"(?:^|\s)-[vR]\s", text):
        return "[[ -v ]] evaluates an array subscript"
    for left, right in _TEST_ARITHMETIC.findall(text):
        if not (_NUMBER.fullmatch(left) and _NUMBER.fullmatch(right)):
            return "[[ ... -eq ... ]] evaluates both sides as arithmetic"
    return ""
