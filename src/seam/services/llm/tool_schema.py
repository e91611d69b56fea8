"""The small subset of JSON Schema that tool calls recovered from text are checked
against (see `text_tool_calls`): enough to refuse what a confused model writes, kept in
its own module because checking arguments is a job of its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def schema_error(arguments: Any, schema: Mapping[str, Any]) -> str | None:
    """The first way `arguments` break `schema`, or None when they fit.

    A small subset of JSON Schema, enough to refuse what a confused model writes: `type`
    (one or a list), `enum`, `required`, `properties`, `additionalProperties` (false or a
    schema) and `items`, recursively. Anything else (`anyOf`, formats, lengths) is not
    checked: the tool still validates its own input.
    """
    return _check(arguments, schema, "")


def _check(value: Any, schema: Any, where: str) -> str | None:
    if not isinstance(schema, Mapping):
        return None
    expected = schema.get("type")
    if expected is not None:
        names = [expected] if isinstance(expected, str) else list(expected)
        if not any(_is_type(value, name) for name in names):
            return f"{_subject(where)} should be {' or '.join(names)}, got {type_name(value)}"
    enum = schema.get("enum")
    if enum is not None and not any(_same(value, option) for option in enum):
        shown = ", ".join(json.dumps(option) for option in enum)
        got = json.dumps(value, ensure_ascii=False)
        return f"{_subject(where)} must be one of {shown}, got {got}"
    if isinstance(value, dict):
        return _check_object(value, schema, where)
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        for index, item in enumerate(value):
            error = _check(item, items, f"{where}[{index}]")
            if error is not None:
                return error
    return None


def _check_object(value: dict[str, Any], schema: Mapping[str, Any], where: str) -> str | None:
    for key in schema.get("required") or ():
        if key not in value:
            return f"missing the required property {_path(where, key)!r}"
    properties = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    for key, item in value.items():
        sub = properties.get(key)
        if sub is None and extra is False:
            allowed = ", ".join(properties) or "none"
            return f"unknown property {_path(where, key)!r} (allowed: {allowed})"
        error = _check(item, sub if sub is not None else extra, _path(where, key))
        if error is not None:
            return error
    return None


def _path(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _subject(where: str) -> str:
    return repr(where) if where else "the arguments"


def _is_type(value: Any, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        if isinstance(value, float):
            return value.is_integer()
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "null":
        return value is None
    return True  # a type this subset does not know is not held against the model


def _same(value: Any, option: Any) -> bool:
    """Equality that keeps JSON's types apart (Python has True == 1)."""
    return value == option and isinstance(value, bool) == isinstance(option, bool)


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
