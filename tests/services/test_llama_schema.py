"""The local model's argument grammar: the tool's schema, integer bounds included.

The integer rules are checked exhaustively over a range of numbers by reading the
grammar as a regular expression (GBNF's literals, classes, groups and `?` mean the same
there); the grammars of every built-in tool must parse in llama.cpp.
"""

from __future__ import annotations

import random
import re

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (seam[local])")

from llama_cpp import LlamaGrammar

from seam.contracts.tools import ToolContext
from seam.core import InMemoryStorage
from seam.plugins.tools.files import ReadFile
from seam.services.llm.llama_schema import (
    _gbnf,
    integer_bounds,
    schema_grammar,
)
from seam.wiring.tools import build_tool_registry


def _as_regex(gbnf: str) -> re.Pattern[str]:
    text = re.sub(r'"([^"]*)"', lambda m: re.escape(m.group(1)), gbnf)
    text = text.replace("(", "(?:").replace(" ", "")
    return re.compile(f"(?:{text})")


CASES = [
    (1, None),
    (0, None),
    (None, 20),
    (1, 20),
    (-5, 5),
    (-1000, -3),
    (7, 7),
    (123, 987),
    (None, -1),
    (99, 101),
    (10, 999),
    (0, 0),
    *(
        (a, random.Random(a).randint(a, 1100))
        for a in random.Random(7).sample(range(-1100, 1100), 60)
    ),
]


@pytest.mark.parametrize(("low", "high"), CASES)
def test_an_integer_rule_spells_exactly_the_numbers_in_range(
    low: int | None, high: int | None
) -> None:
    rule = _as_regex(_gbnf(low, high))
    for n in range(-1300, 1300):
        inside = (low is None or n >= low) and (high is None or n <= high)
        assert bool(rule.fullmatch(str(n))) is inside, n
    for spelling in ("01", "-0", "00", "+1", "1.0", "1e3", ""):
        assert rule.fullmatch(spelling) is None, spelling


def test_an_unbounded_side_stops_at_fifteen_digits() -> None:
    rule = _as_regex(_gbnf(1, None))
    assert rule.fullmatch("9" * 15)
    assert not rule.fullmatch("1" + "0" * 15)


def test_bounds_come_from_every_keyword() -> None:
    assert integer_bounds({"minimum": 1}) == (1, None)
    assert integer_bounds({"exclusiveMinimum": 0, "maximum": 20}) == (1, 20)
    assert integer_bounds({"minimum": 0.5, "exclusiveMaximum": 10}) == (1, 9)
    assert integer_bounds({"minimum": 1, "exclusiveMinimum": 3}) == (4, None)
    assert integer_bounds({"type": "integer"}) == (None, None)
    with pytest.raises(ValueError, match="no integer lies between 5 and 4"):
        _gbnf(5, 4)


def test_read_file_grammar_keeps_optional_arguments_optional_and_offset_positive() -> None:
    grammar = schema_grammar(ReadFile.parameters)
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines())
    # path is always written; offset and limit only if the model chooses them.
    assert rules["root"] == (
        '"{" space path-kv ( "," space ( offset-kv offset-rest | limit-kv ) )? "}" space'
    )
    assert rules["path"] == '"\\"" char+ "\\"" space'  # minLength 1: never ""
    offset = _as_regex(rules["offset"].removesuffix(" space"))
    assert not offset.fullmatch("0") and offset.fullmatch("1") and offset.fullmatch("1000")


def test_every_built_in_tool_grammar_parses() -> None:
    ctx = ToolContext(session_key="s", storage=InMemoryStorage())
    for tool in build_tool_registry(workflows=True).build(None, ctx):
        LlamaGrammar.from_string(schema_grammar(tool.parameters), verbose=False)
