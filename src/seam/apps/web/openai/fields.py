"""Which request fields the OpenAI-compatible endpoint honours, ignores or refuses.

Every field is one of three kinds (`docs/openai-api.md` lists them):
- honoured: it changes what happens (`max_tokens`, `temperature`, `stop`, `tools`, ...);
- ignored: harmless bookkeeping that changes nothing the client gets (`user`,
  `metadata`, `store`, ...);
- refused: a 400 naming the field. A value that asks for nothing (`n: 1`, `top_p: 1`,
  `seed: null`, `logprobs: false`) is accepted; one Seam cannot honour is refused, and so
  is any field not listed, rather than being dropped silently.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from seam.apps.web.openai.messages import refuse
from seam.contracts.model import ToolDefinition
from seam.contracts.turn_extras import Sampling

# Bookkeeping fields that change nothing the client gets back.
IGNORED = frozenset(
    {"user", "metadata", "store", "service_tier", "safety_identifier", "prompt_cache_key"}
)
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _is_none(value: Any) -> bool:
    return value is None


# field -> (accepts the value, why other values are refused)
NEUTRAL: Mapping[str, tuple[Callable[[Any], bool], str]] = {
    "n": (lambda v: v is None or v == 1, "only 1 is supported (one answer per request)"),
    "top_p": (
        lambda v: v is None or v == 1,
        "only 1 is supported (Seam's providers are not sent it)",
    ),
    "seed": (_is_none, "is not supported (Seam's providers are not sent a seed)"),
    "frequency_penalty": (lambda v: v in (None, 0), "only 0 is supported"),
    "presence_penalty": (lambda v: v in (None, 0), "only 0 is supported"),
    "logit_bias": (lambda v: not v, "is not supported"),
    "logprobs": (lambda v: v in (None, False), "is not supported"),
    "top_logprobs": (_is_none, "is not supported"),
    "parallel_tool_calls": (
        lambda v: v in (None, True),
        "false is not supported: the model may call several tools at once",
    ),
    "modalities": (lambda v: v in (None, ["text"]), "only ['text'] is supported"),
    "audio": (_is_none, "audio output is not supported"),
    "prediction": (_is_none, "is not supported"),
    "functions": (lambda v: not v, "legacy functions are not supported: use tools"),
    "function_call": (_is_none, "legacy functions are not supported: use tool_choice"),
    "reasoning_effort": (_is_none, "is not supported"),
    "web_search_options": (_is_none, "is not supported"),
    "verbosity": (_is_none, "is not supported"),
}


Rules = Mapping[str, tuple[Callable[[Any], bool], str]]
NO_RULES: Rules = {}


def check_fields(body: Mapping[str, Any], honoured: frozenset[str], more: Rules = NO_RULES) -> None:
    """A 400 for the first field that is neither honoured, ignored nor neutral (`NEUTRAL`,
    and `more` for one API's own fields)."""
    for name, value in body.items():
        if name in honoured or name in IGNORED:
            continue
        rule = more.get(name) or NEUTRAL.get(name)
        if rule is None:
            raise refuse(name, "unknown field (see docs/openai-api.md for the fields honoured)")
        accepts, why = rule
        if not accepts(value):
            raise refuse(name, why)


def basics(body: Any, honoured: frozenset[str], more: Rules = NO_RULES) -> tuple[str, bool]:
    """What both APIs check first: a JSON object, every field known, and its `model`
    and `stream`."""
    if not isinstance(body, dict):
        raise refuse("body", "must be a JSON object")
    check_fields(body, honoured, more)
    model = body.get("model")
    if not isinstance(model, str) or not 1 <= len(model) <= 100:
        raise refuse("model", "must be a model id (GET /v1/models)")
    stream = body.get("stream") or False
    if not isinstance(stream, bool):
        raise refuse("stream", "must be true or false")
    return model, stream


def an_object(body: Mapping[str, Any], name: str) -> dict[str, Any]:
    """An optional object field (missing: empty)."""
    value = body.get(name) or {}
    if not isinstance(value, dict):
        raise refuse(name, "must be an object")
    return value


def max_tokens(body: Mapping[str, Any], *names: str) -> int | None:
    """The answer's token limit from whichever of `names` is given (a 400 if not >= 1)."""
    for name in names:
        value = body.get(name)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise refuse(name, "must be an integer >= 1")
        return value
    return None


def temperature(body: Mapping[str, Any]) -> float | None:
    value = body.get("temperature")
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 2:
        raise refuse("temperature", "must be a number from 0 to 2")
    return float(value)


def stops(value: Any) -> tuple[str, ...]:
    """`stop`: a string or up to 4 of them."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if (
        not isinstance(items, list)
        or not 1 <= len(items) <= 4
        or not all(isinstance(s, str) and s for s in items)
    ):
        raise refuse("stop", "must be a non-empty string or a list of up to 4 of them")
    return tuple(items)


def tool_choice(value: Any, field: str = "tool_choice") -> str:
    """`auto`, `none`, `required`, or one function by name (either wire shape)."""
    if value is None:
        return "auto"
    if isinstance(value, str) and value in ("auto", "none", "required"):
        return value
    if isinstance(value, dict) and value.get("type") == "function":
        function = value.get("function")
        name = function.get("name") if isinstance(function, dict) else value.get("name")
        if isinstance(name, str) and name:
            return name
    raise refuse(field, "must be 'auto', 'none', 'required' or a function by name")


def definition(raw: Any, field: str, own: frozenset[str]) -> ToolDefinition:
    """One client tool (`{"name", "description", "parameters"}`) as a definition."""
    if not isinstance(raw, dict):
        raise refuse(field, "must be an object")
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise refuse(f"{field}.name", "must be 1 to 64 letters, digits, '_' or '-'")
    if name in own:
        raise refuse(f"{field}.name", f"{name!r} is one of Seam's own tools: rename yours")
    parameters = raw.get("parameters") or {"type": "object", "properties": {}}
    if not isinstance(parameters, dict):
        raise refuse(f"{field}.parameters", "must be a JSON schema object")
    description = raw.get("description") or ""
    if not isinstance(description, str):
        raise refuse(f"{field}.description", "must be a string")
    return ToolDefinition(name, description, parameters)


def client_tools(raw: Any, own: frozenset[str], nested: bool) -> tuple[ToolDefinition, ...]:
    """`tools`: each `{"type": "function", ...}` with the function's fields under
    `function` (chat, `nested`) or beside `type` (responses)."""
    if not raw:
        return ()
    if not isinstance(raw, list):
        raise refuse("tools", "must be a list")
    out = []
    for i, tool in enumerate(raw):
        if not isinstance(tool, dict) or tool.get("type") != "function":
            raise refuse(f"tools[{i}].type", "only 'function' tools are supported")
        spec, where = (
            (tool.get("function"), f"tools[{i}].function") if nested else (tool, f"tools[{i}]")
        )
        out.append(definition(spec, where, own))
    return tuple(out)


def sampling(body: Mapping[str, Any], limit: int | None, choice: str) -> Sampling:
    return Sampling(max_tokens=limit, temperature=temperature(body), tool_choice=choice)


__all__ = [
    "IGNORED",
    "NEUTRAL",
    "an_object",
    "basics",
    "check_fields",
    "client_tools",
    "definition",
    "max_tokens",
    "sampling",
    "stops",
    "temperature",
    "tool_choice",
]
