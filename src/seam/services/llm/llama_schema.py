"""The local model's argument grammar, built from the tool's JSON Schema.

llama-cpp-python turns a schema into a GBNF grammar (`SchemaConverter`): required
properties always, optional ones only if the model writes them, enums, string lengths.
It leaves integer bounds out ("TODO: support minimum, maximum"), so a schema's
`"minimum": 1` did not stop the bundled model writing `"offset": 0`, a call the tool
then refused. `schema_grammar` adds them: an integer with bounds becomes a rule that
spells exactly the numbers in range, digit by digit, so the arguments the model writes
are the arguments the tool's validator accepts.

Imported only when the local model builds a grammar (it imports llama_cpp); the digit
logic (`integer_alternatives`) is plain Python and tested on its own.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from llama_cpp.llama_grammar import RESERVED_NAMES, SchemaConverter

from seam.contracts.tools import plain_json

# An unbounded side stops at this many digits, as llama.cpp's own integer rule does.
MAX_DIGITS = 15

_BOUND_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def schema_grammar(schema: Mapping[str, Any]) -> str:
    """GBNF for a JSON object that satisfies `schema`, integer bounds included."""
    # The `no-untyped-call` ignores in this file: llama_cpp's SchemaConverter (py.typed)
    # leaves its methods unannotated.
    converter = _Converter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)  # type: ignore[no-untyped-call]
    plain = json.loads(json.dumps(schema, default=plain_json))
    plain = converter.resolve_refs(plain, "schema")
    converter.visit(plain, "")
    return str(converter.format_grammar())  # type: ignore[no-untyped-call]


class _Converter(SchemaConverter):
    def visit(self, schema: Any, name: str) -> Any:
        if isinstance(schema, dict) and schema.get("type") == "integer":
            low, high = integer_bounds(schema)
            if low is not None or high is not None:
                rule_name = name + "-" if name in RESERVED_NAMES else name or "root"
                return self._add_rule(rule_name, f"({_gbnf(low, high)}) space")  # type: ignore[no-untyped-call]
        return super().visit(schema, name)  # type: ignore[no-untyped-call]


def integer_bounds(schema: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """The smallest and largest integer the schema allows (None: unbounded)."""
    lows: list[int] = []
    highs: list[int] = []
    for key in _BOUND_KEYS:
        value = schema.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if key == "minimum":
            lows.append(math.ceil(value))
        elif key == "exclusiveMinimum":
            lows.append(math.floor(value) + 1)
        elif key == "maximum":
            highs.append(math.floor(value))
        else:
            highs.append(math.ceil(value) - 1)
    return (max(lows) if lows else None), (min(highs) if highs else None)


def integer_alternatives(low: int | None, high: int | None) -> list[list[str]]:
    """The decimal spellings of the integers in [low, high], as alternatives of tokens:
    a token is a literal ("-", "7") or a digit class ("[0-9]"). No leading zeros, no
    "-0"; an unbounded side stops at MAX_DIGITS digits. Empty when the range is empty."""
    top = 10**MAX_DIGITS - 1
    low = -top if low is None else max(low, -top)
    high = top if high is None else min(high, top)
    if low > high:
        return []
    out: list[list[str]] = []
    if low < 0:
        # -1 .. -k is "-" followed by 1 .. k.
        out += [["-", *alt] for alt in _non_negative(max(1, -high), -low)]
    if high >= 0:
        out += _non_negative(max(0, low), high)
    return out


def _non_negative(low: int, high: int) -> list[list[str]]:
    out: list[list[str]] = []
    for digits in range(len(str(low)), len(str(high)) + 1):
        first = 10 ** (digits - 1) if digits > 1 else 0
        last = 10**digits - 1
        out += _same_length(str(max(low, first)), str(min(high, last)))
    return out


def _same_length(low: str, high: str) -> list[list[str]]:
    """Numbers from `low` to `high`, both with the same number of digits."""
    if low == high:
        return [list(low)]
    if len(low) == 1:
        return [[_digits(int(low), int(high))]]
    if low[0] == high[0]:
        return [[low[0], *alt] for alt in _same_length(low[1:], high[1:])]
    rest = len(low) - 1
    start, end = int(low[0]), int(high[0])
    head: list[list[str]] = []
    tail: list[list[str]] = []
    if low[1:] != "0" * rest:
        head = [[low[0], *alt] for alt in _same_length(low[1:], "9" * rest)]
        start += 1
    if high[1:] != "9" * rest:
        tail = [[high[0], *alt] for alt in _same_length("0" * rest, high[1:])]
        end -= 1
    middle = [[_digits(start, end), *["[0-9]"] * rest]] if start <= end else []
    return head + middle + tail


def _digits(low: int, high: int) -> str:
    return str(low) if low == high else f"[{low}-{high}]"


def _gbnf(low: int | None, high: int | None) -> str:
    alternatives = integer_alternatives(low, high)
    if not alternatives:
        raise ValueError(f"no integer lies between {low} and {high}")
    return " | ".join(_runs(alternatives))


def _runs(alternatives: list[list[str]]) -> list[str]:
    """GBNF per alternative, with runs such as `[1-9]`, `[1-9] [0-9]`, `[1-9] [0-9] [0-9]`
    folded into `[1-9] ([0-9] ([0-9])?)?`: one path for the sampler instead of fifteen."""
    out: list[str] = []
    i = 0
    while i < len(alternatives):
        alt = alternatives[i]
        j = i + 1
        while (
            j < len(alternatives)
            and len(alternatives[j]) == len(alt) + (j - i)
            and alternatives[j][: len(alt)] == alt
            and all(token == "[0-9]" for token in alternatives[j][len(alt) :])
        ):
            j += 1
        out.append(" ".join(_token(token) for token in alt) + _nested(j - i - 1))
        i = j
    return out


def _nested(depth: int) -> str:
    """` ([0-9] ([0-9])?)?` for depth 2."""
    inner = ""
    for _ in range(depth):
        inner = f" ([0-9]{inner})?"
    return inner


def _token(token: str) -> str:
    return token if token.startswith("[") else f'"{token}"'
