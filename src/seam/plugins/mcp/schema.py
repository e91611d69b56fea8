"""`InterpretingValidator`: arguments checked against a schema that came from outside.

An MCP server's `inputSchema` is data from another process, so it is interpreted
(`jsonschema`), never compiled into Python the way our own tools' schemas are. As for
our own tools, quoted top-level scalars ("12", "true") are taken for what they spell
where the schema asks for a number or a boolean, and a failure is one sentence naming
the argument, for the model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from seam.contracts.tools import ArgumentError, coerce_scalar

MAX_SCHEMAS = 1024
VALUE_CHARS = 60
_SCALARS = frozenset({"integer", "number", "boolean"})


class InterpretingValidator:
    """An `ArgumentValidator` over `jsonschema` (the schema's own draft, else 2020-12)."""

    def __init__(self) -> None:
        self._by_text: dict[str, Any] = {}

    def validate(self, schema: Mapping[str, Any], args: Mapping[str, Any]) -> Mapping[str, Any]:
        checker = self._checker(schema)
        args = _coerce(schema, args)
        error = next(iter(sorted(checker.iter_errors(dict(args)), key=_depth)), None)
        if error is not None:
            raise ArgumentError(_describe(error))
        return args

    def _checker(self, schema: Mapping[str, Any]) -> Any:
        text = json.dumps(schema, sort_keys=True, default=str)
        checker = self._by_text.get(text)
        if checker is None:
            import jsonschema  # on first use: the CLI's start-up should not pay for it

            plain = json.loads(text)
            default = jsonschema.Draft202012Validator
            cls = jsonschema.validators.validator_for(plain, default=default)
            try:
                cls.check_schema(plain)
            except jsonschema.SchemaError as exc:
                raise ValueError(exc.message) from None
            checker = cls(plain)
            if len(self._by_text) >= MAX_SCHEMAS:
                self._by_text.clear()
            self._by_text[text] = checker
        return checker


def _depth(error: Any) -> tuple[int, str]:
    return (len(error.path), str(error.message))


def _describe(error: Any) -> str:
    where = ""
    for part in error.path:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    if error.validator == "required":
        return f"missing required argument: {error.message}" + (f" in {where!r}" if where else "")
    subject = f"{where!r}" if where else "the arguments"
    return f"{subject}: {_cut(error.message)}"


def _cut(text: str) -> str:
    return text if len(text) <= 200 else text[:199] + "…"


def _coerce(schema: Mapping[str, Any], args: Mapping[str, Any]) -> Mapping[str, Any]:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return args
    out: dict[str, Any] | None = None
    for name, sub in properties.items():
        value = args.get(name)
        wanted = sub.get("type") if isinstance(sub, Mapping) else None
        if not isinstance(value, str) or wanted not in _SCALARS:
            continue
        converted = coerce_scalar(value.strip(), str(wanted))
        if converted is not None:
            out = dict(args) if out is None else out
            out[name] = converted
    return args if out is None else out
