"""`JsonSchemaValidator`: tool-call arguments checked against the tool's JSON Schema.

fastjsonschema turns a schema into a Python function once; the function is cached per
schema (tools keep their schema in one object, so the usual lookup is by identity), and
checking a call is then a plain function call. It reports the first rule broken, which is
what the model needs: one message naming the argument, the rule and the value it sent.

Small models often quote scalars ("12", "true"). Where the schema asks for an integer, a
number or a boolean at the top level, such a string is taken for the value it spells
before checking, and the tool runs with the converted copy; nothing else is guessed.

The schemas are the tools' own code, and are trusted as such: fastjsonschema generates
Python from them. A tool whose schema comes from outside the process (a remote tool
server) should be given a validator that interprets schemas instead; `ArgumentValidator`
is the seam for that.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeGuard

from seam.contracts.tools import ArgumentError, coerce_scalar, plain_json

if TYPE_CHECKING:
    import fastjsonschema

MAX_SCHEMAS = 1024  # compiled schemas kept; more means tools build a new schema per call
VALUE_CHARS = 60  # of the offending value shown in a message

_TYPES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "a list",
    "null": "null",
}

Check = Callable[[Any], Any]
# Top-level properties whose quoted values are converted, with the type each one wants.
Coercions = tuple[tuple[str, str], ...]
_SCALARS = frozenset({"integer", "number", "boolean"})


class JsonSchemaValidator:
    """An `ArgumentValidator` over fastjsonschema, with messages written for a model."""

    def __init__(self) -> None:
        # id(schema) -> (schema, compiled): holding the schema keeps its id from being reused.
        self._by_id: dict[int, tuple[Mapping[str, Any], _Compiled]] = {}
        # The schema's JSON -> compiled, for tools that rebuild an equal schema per instance.
        self._by_text: dict[str, _Compiled] = {}

    def validate(self, schema: Mapping[str, Any], args: Mapping[str, Any]) -> Mapping[str, Any]:
        check, coercions = self._compiled(schema)
        if coercions:
            args = _coerce(args, coercions)
        try:
            check(args)
        except ValueError as exc:
            if not _is_value_error(exc):
                raise
            raise ArgumentError(describe(exc)) from None
        return args

    def _compiled(self, schema: Mapping[str, Any]) -> _Compiled:
        known = self._by_id.get(id(schema))
        if known is not None and known[0] is schema:
            return known[1]
        text = json.dumps(schema, sort_keys=True, default=plain_json)
        compiled = self._by_text.get(text)
        if compiled is None:
            # Imported on first use: the CLI's start-up should not pay for it.
            import fastjsonschema

            # Compiled in the schema's own key order: messages list arguments as declared.
            plain = json.loads(json.dumps(schema, default=plain_json))
            try:
                # use_default=False: the tool sees what the model sent, never a filled-in copy.
                check = fastjsonschema.compile(plain, use_default=False)
            except fastjsonschema.JsonSchemaDefinitionException as exc:
                raise ValueError(str(exc)) from None
            compiled = (check, _coercions(plain))
            if len(self._by_text) >= MAX_SCHEMAS:
                self._by_text.clear()
            self._by_text[text] = compiled
        if len(self._by_id) >= MAX_SCHEMAS:
            self._by_id.clear()
        self._by_id[id(schema)] = (schema, compiled)
        return compiled


_Compiled = tuple[Check, Coercions]


def _coercions(schema: Any) -> Coercions:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return ()
    return tuple(
        (name, sub["type"])
        for name, sub in properties.items()
        if isinstance(sub, dict) and isinstance(sub.get("type"), str) and sub["type"] in _SCALARS
    )


def _coerce(args: Mapping[str, Any], coercions: Coercions) -> Mapping[str, Any]:
    """`args`, or a copy with quoted scalars converted (left as sent when they do not
    spell a value of the wanted type: the check then names the argument)."""
    out: dict[str, Any] | None = None
    for name, wanted in coercions:
        value = args.get(name)
        if not isinstance(value, str):
            continue
        converted = coerce_scalar(value.strip(), wanted)
        if converted is not None:
            if out is None:
                out = dict(args)
            out[name] = converted
    return args if out is None else out


def _is_value_error(exc: ValueError) -> TypeGuard[fastjsonschema.JsonSchemaValueException]:
    import fastjsonschema  # already imported by the compile that made the check

    return isinstance(exc, fastjsonschema.JsonSchemaValueException)


def describe(exc: fastjsonschema.JsonSchemaValueException) -> str:
    """One sentence: which argument, which rule, and what was sent."""
    rule = exc.rule
    limit = exc.rule_definition
    where = _where(exc.path)
    subject = f"{where!r}" if where else "the arguments"
    got = _shown(exc.value)
    named = _names_wrong(exc, where)
    if named is not None:
        return named
    if rule == "type":
        wanted = [limit] if isinstance(limit, str) else list(limit)
        return f"{subject} must be {' or '.join(_TYPES.get(t, t) for t in wanted)} (got {got})"
    if rule == "enum":
        options = ", ".join(_shown(option) for option in limit)
        return f"{subject} must be one of {options} (got {got})"
    if rule == "const":
        return f"{subject} must be {_shown(limit)} (got {got})"
    if rule in _BOUNDS:
        return f"{subject} must be {_BOUNDS[rule]} {limit:g} (got {got})"
    if rule == "pattern":
        return f"{subject} must match the pattern {limit!r} (got {got})"
    sized = _size_wrong(rule, subject, limit, exc.value)
    if sized is not None:
        return sized
    # Anything rarer: fastjsonschema's own words, with our name for the argument.
    message = str(exc.message)
    name = str(exc.name)
    return message.replace(name, subject, 1) if message.startswith(name) else message


def _names_wrong(exc: fastjsonschema.JsonSchemaValueException, where: str) -> str | None:
    """A missing or an unknown argument, named; None for any other rule."""
    value, limit = exc.value, exc.rule_definition
    if not isinstance(value, Mapping):
        return None
    inside = f" in {where!r}" if where else ""
    if exc.rule == "required":
        missing = [name for name in limit if name not in value]
        names = ", ".join(repr(name) for name in missing) or repr(limit)
        noun = "argument" if len(missing) == 1 else "arguments"
        return f"missing required {noun} {names}{inside}"
    if exc.rule == "additionalProperties":
        known = (exc.definition or {}).get("properties") or {}
        extra = [name for name in value if name not in known]
        allowed = ", ".join(known) or "none"
        noun = "argument" if len(extra) == 1 else "arguments"
        names = ", ".join(repr(name) for name in extra)
        return f"unknown {noun} {names}{inside} (expected: {allowed})"
    return None


# The size rules, by name: the bound's words, the unit, and the plainer words for a bound
# of 1 (None: no plainer words). One table, so the four messages cannot drift apart.
_SIZES: dict[str, tuple[str, str, str | None]] = {
    "minLength": ("be at least", "characters", "must not be empty"),
    "maxLength": ("be at most", "characters", None),
    "minItems": ("have at least", "items", "must not be an empty list"),
    "maxItems": ("have at most", "items", None),
}


def _size_wrong(rule: str | None, subject: str, limit: Any, value: Any) -> str | None:
    """A text or a list too short or too long; None for any other rule."""
    if rule not in _SIZES:
        return None
    bound, unit, when_one = _SIZES[rule]
    if limit == 1 and when_one is not None:
        return f"{subject} {when_one}"
    return f"{subject} must {bound} {limit:,} {unit} (got {len(value):,})"


_BOUNDS = {
    "minimum": ">=",
    "maximum": "<=",
    "exclusiveMinimum": ">",
    "exclusiveMaximum": "<",
}


def _where(path: Any) -> str:
    """fastjsonschema's path (["data", "items", "1"]) as the model wrote it: items[1]."""
    out = ""
    for part in list(path or ())[1:]:
        part = str(part)
        out += f"[{part}]" if part.isdigit() else (f".{part}" if out else part)
    return out


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"
