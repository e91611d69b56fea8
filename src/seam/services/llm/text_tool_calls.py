"""Tool calls a model wrote as text, recovered into real calls.

Servers in front of local models (Ollama, vLLM, llama.cpp) often hand back a tool call as
plain text in the notation the model was trained on instead of the API's structured field:
Hermes/Qwen `<tool_call>{...}</tool_call>`, Llama 3.1 `<function=name>{...}</function>`
and `<|python_tag|>{...}`, Mistral `[TOOL_CALLS] [...]` (or `[TOOL_CALLS]name[ARGS]{...}`),
a fenced ```json block, or a bare JSON object naming a tool.

Recovery is conservative on purpose: a false positive runs a tool the model never meant
to call, while a miss only leaves the model's words as text. So only names of offered
tools count, arguments must satisfy the tool's schema, and several calls written in one
block are used together or not at all. The JSON repairs are the two slips small models
make most and that have one obvious meaning: trailing commas, and Python-literal syntax
(single quotes, True/False/None). Nothing else is guessed (no unquoted keys, no
completing cut-off JSON).
"""

from __future__ import annotations

import ast
import json
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from seam.contracts.messages import ToolCall
from seam.contracts.model import ToolDefinition
from seam.services.llm.tool_schema import schema_error, type_name

# Where a block opens. Only openers are matched: a block's end is found by reading its
# JSON, so a closing tag inside a string argument (a file that mentions `</function>`)
# does not cut the call short. Closing tags are optional: models often stop generating
# right before them.
_OPENERS = re.compile(
    r"<tool_call>|<\|python_tag\|>|\[TOOL_CALLS\]|<function=(?P<fname>[^>\s]+)>"
    r"|```[ \t]*(?P<lang>[\w-]*)[ \t]*\n"
)
_CLOSERS = {
    "<tool_call>": ("</tool_call>",),
    "<|python_tag|>": ("<|eom_id|>", "<|eot_id|>"),
    "[TOOL_CALLS]": ("</s>",),
    "<function=": ("</function>",),
}
_LABELS = {
    "<tool_call>": "<tool_call> block",
    "<|python_tag|>": "<|python_tag|> block",
    "[TOOL_CALLS]": "[TOOL_CALLS] block",
}
_FENCE_LANGS = frozenset({"", "json", "tool_call", "tool_calls", "tool_code"})
_MISTRAL_NAMED = re.compile(r"\s*([A-Za-z_][\w.-]*)\[ARGS\]")
# Where a bare JSON call may begin: an object with a quoted first key, or a list of them.
_BARE_START = re.compile(r"""\{\s*["']|\[\s*\{\s*["']""")
_SIGNIFICANT = re.compile(r"""[\\"'{}\[\]]""")
_TRAILING_COMMA = re.compile(r'("(?:[^"\\]|\\.)*")|,(\s*[}\]])')
_HINTS = re.compile(r"[{\[]|<tool_call>|<function=|<\|python_tag\|>")

_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
_ENVELOPE_KEYS = frozenset({"id", "type"})
_MAX_DEPTH = 64
_MAX_UNCLOSED = 16

# For deciding early whether streamed text may be a call (see `starts_like_call`).
_TAG_STARTS = ("<tool_call>", "<function=", "<|python_tag|>", "[TOOL_CALLS]")
_PREFIXES = (*_TAG_STARTS, "```")
_CALL_KEYS = frozenset({*_NAME_KEYS, *_ENVELOPE_KEYS})
_DECIDE_WITHIN = 200


@dataclass(frozen=True, slots=True)
class Recovery:
    """The calls found, the text left once they are cut out, and why any were refused.

    `remaining_text` is the input unchanged when nothing was recovered. Each `rejected`
    entry names the block and the reason (unknown tool, bad JSON, schema mismatch).
    """

    calls: list[ToolCall]
    remaining_text: str
    rejected: list[str]


def recover_tool_calls(text: str, tools: Sequence[ToolDefinition]) -> Recovery:
    """Find tool calls written as text; only offered tools with valid arguments count."""
    if not tools or not _HINTS.search(text):
        return Recovery([], text, [])
    scan = _Scan(tools)
    pieces = scan.text(text)
    if not scan.calls:
        return Recovery([], text, scan.rejected)
    return Recovery(scan.calls, _join(pieces), scan.rejected)


def starts_like_call(text: str) -> bool | None:
    """Whether text that a stream has produced so far may be the start of a tool call.

    True: it opens like one of the notations `recover_tool_calls` reads, so a provider
    should hold it back until the stream ends. False: it cannot be, show it. None: too
    little text to tell yet (only whitespace, or a prefix such as `<tool` or `{"na`).
    """
    verdict = _starts_like_call(text.lstrip())
    if verdict is None and len(text) > _DECIDE_WITHIN:
        return False
    return verdict


# -- scanning ----------------------------------------------------------------------------


class _Scan:
    """Walks one text, collecting calls and rejections, and returns what text to keep."""

    __slots__ = ("calls", "rejected", "tools")

    def __init__(self, tools: Sequence[ToolDefinition]) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.calls: list[ToolCall] = []
        self.rejected: list[str] = []

    def text(self, text: str) -> list[str | None]:
        """The kept pieces of `text` in order; None marks where a call was cut out."""
        pieces: list[str | None] = []
        position = 0
        while (opener := _OPENERS.search(text, position)) is not None:
            end, replacement = self._block(text, opener)
            pieces += self._bare(text[position : opener.start()])
            pieces += [text[opener.start() : end]] if replacement is None else replacement
            position = end
        pieces += self._bare(text[position:])
        return pieces

    def _block(self, text: str, opener: re.Match[str]) -> tuple[int, list[str | None] | None]:
        """Where the block ends, and the pieces that replace it (None: keep it as is)."""
        if opener["lang"] is not None:
            return self._fence(text, opener)
        start = opener.end()
        name = opener["fname"]
        tag = opener.group(0) if name is None else "<function="
        closers = _CLOSERS[tag]
        label = _LABELS.get(tag) or f"<function={name}> block"
        if tag == "[TOOL_CALLS]" and (named := _MISTRAL_NAMED.match(text, start)) is not None:
            name, start = named.group(1), named.end()
        values, error, stop = _values(text, start)
        if error is None and not values:
            closed = _after_closer(text, stop, closers) != stop or not text[stop:].strip()
            if name is None or not closed:  # a named call may have no arguments at all
                error = "holds no JSON object"
        if error is None and name is not None and len(values) > 1:
            error = "holds more than one JSON object"
        if error is not None:
            self.rejected.append(f"{label}: {error}")
            return _past_closer(text, start, closers), None
        end = _after_closer(text, stop, closers)
        if name is not None:
            call = self._call(label, name, values[0] if values else None)
            calls = None if call is None else [call]
        else:
            calls = self._calls(label, values, strict=True)
        if calls is None:
            return end, None
        self.calls += calls
        return end, [None]

    def _fence(self, text: str, opener: re.Match[str]) -> tuple[int, list[str | None] | None]:
        """A fenced block is a call only if what it holds is; other code stays code."""
        close = text.find("```", opener.end())
        body_end, end = (len(text), len(text)) if close < 0 else (close, close + 3)
        if opener["lang"].lower() not in _FENCE_LANGS:
            return end, None
        inner = self.text(text[opener.end() : body_end])
        return end, ([None, *inner] if None in inner else None)

    def _bare(self, text: str) -> list[str | None]:
        """JSON calls in running text; JSON that is not call-shaped is left alone quietly."""
        if "{" not in text:
            return [text] if text else []
        pieces: list[str | None] = []
        kept_from = 0
        position = 0
        unclosed = 0
        for match in _BARE_START.finditer(text):
            start = match.start()
            if start < position:
                continue
            end, depth = _span_end(text, start)
            if end < 0:
                # Each unclosed start reads to the end of the text: a bound keeps prose
                # full of stray braces from costing quadratic time.
                unclosed += 1
                if unclosed > _MAX_UNCLOSED:
                    break
                continue
            if depth > _MAX_DEPTH:
                continue
            value, error = _parse(text[start:end])
            if error is not None:
                continue
            position = end
            calls = self._calls(f"JSON at character {start}", [value], strict=False)
            if calls:
                self.calls += calls
                pieces += [text[kept_from:start], None]
                kept_from = end
        pieces.append(text[kept_from:])
        return pieces

    def _calls(self, label: str, values: Iterable[Any], *, strict: bool) -> list[ToolCall] | None:
        """Every value as calls, or None (and maybe a rejection) if any one is unusable.

        Not `strict` (bare JSON in prose): a value that is not shaped like a call, or
        names an unknown tool without giving arguments, is ordinary JSON and not reported.
        """
        objects: list[Any] = []
        for value in values:
            objects.extend(value if isinstance(value, list) else [value])
        shapes = [_shape(item) for item in objects]
        if not objects or any(shape is None for shape in shapes):
            if strict:
                self.rejected.append(
                    f'{label}: not a tool call (expected {{"name": ..., "arguments": {{...}}}})'
                )
            return None
        calls = []
        for shape in shapes:
            assert shape is not None
            name, arguments, explicit = shape
            if not strict and not explicit and name not in self.tools:
                return None
            call = self._call(label, name, arguments)
            if call is None:
                return None
            calls.append(call)
        return calls

    def _call(self, label: str, name: str, arguments: Any) -> ToolCall | None:
        tool = self.tools.get(name)
        if tool is None:
            offered = ", ".join(sorted(self.tools))
            self.rejected.append(f"{label}: {name!r} is not an offered tool (offered: {offered})")
            return None
        parsed, error = _arguments(arguments)
        if error is None:
            error = schema_error(parsed, tool.parameters)
        if error is None:
            try:
                encoded = json.dumps(parsed, ensure_ascii=False)
            except (TypeError, ValueError) as exc:  # a Python literal JSON cannot carry
                error = f"arguments are not JSON data ({exc})"
        if error is not None:
            self.rejected.append(f"{label}: {name}: {error}")
            return None
        return ToolCall(f"call_{uuid.uuid4().hex[:24]}", name, encoded)


def _shape(item: Any) -> tuple[str, Any, bool] | None:
    """(name, arguments, whether an arguments key was present) of a call-shaped object.

    Accepts `{"name"|"tool"|"tool_name"|"function": str, "arguments"|"parameters"|"args"|
    "input": ...}` and OpenAI's own `{"type": "function", "function": {"name", ...}}`.
    Without an arguments key only `id` and `type` may sit beside the name, so a record
    such as `{"name": "Ada", "age": 36}` is data, not a call.
    """
    if not isinstance(item, dict):
        return None
    nested = item.get("function")
    if isinstance(nested, dict):
        return _shape(nested)
    name = next((item[key] for key in _NAME_KEYS if isinstance(item.get(key), str)), None)
    if not name:
        return None
    present = [key for key in _ARGUMENT_KEYS if key in item]
    if len(present) > 1:
        return None
    if present:
        return name, item[present[0]], True
    if len(item) > 1 + len(_ENVELOPE_KEYS.intersection(item)):
        return None
    return name, None, False


def _arguments(value: Any) -> tuple[Any, str | None]:
    """Arguments as a dict: an object, JSON text of one (a nested JSON string), or none."""
    if value is None:
        return {}, None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return {}, None
        value, error = _parse(text)
        if error is not None:
            return None, f"arguments are a string that is not a JSON object ({error})"
    if not isinstance(value, dict):
        return None, f"arguments must be a JSON object, got {type_name(value)}"
    return value, None


def _values(text: str, position: int) -> tuple[list[Any], str | None, int]:
    """The JSON values from `position` on (apart by space, `,` or `;`), any error, and
    where the last one ended."""
    values: list[Any] = []
    stop = position
    length = len(text)
    while True:
        while position < length and (text[position].isspace() or text[position] in ",;"):
            position += 1
        if position >= length or text[position] not in "{[":
            return values, None, stop
        end, depth = _span_end(text, position)
        if end < 0:
            return values, "unterminated JSON (cut off?)", stop
        if depth > _MAX_DEPTH:
            return values, f"JSON nested deeper than {_MAX_DEPTH} levels", stop
        value, error = _parse(text[position:end])
        if error is not None:
            return values, error, stop
        values.append(value)
        position = stop = end


def _after_closer(text: str, position: int, closers: tuple[str, ...]) -> int:
    """Past the block's closing tag when it follows (after spaces), else `position`."""
    after = position
    while after < len(text) and text[after].isspace():
        after += 1
    for closer in closers:
        if text.startswith(closer, after):
            return after + len(closer)
    return position


def _past_closer(text: str, position: int, closers: tuple[str, ...]) -> int:
    """The end of a block that could not be read: its closing tag, or the end of text."""
    ends = [text.find(closer, position) for closer in closers]
    found = [end + len(closer) for end, closer in zip(ends, closers, strict=True) if end >= 0]
    return min(found, default=len(text))


def _span_end(text: str, start: int) -> tuple[int, int]:
    """End (exclusive) of the bracketed value opening at `start`, and its nesting depth;
    -1 when it never closes. Strings in either quote are skipped, escapes honoured."""
    depth = deepest = 0
    quote = ""
    escaped = -1
    for match in _SIGNIFICANT.finditer(text, start):
        index = match.start()
        if index == escaped:
            continue
        char = text[index]
        if quote:
            if char == "\\":
                escaped = index + 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1, deepest
    return -1, deepest


def _parse(span: str) -> tuple[Any, str | None]:
    """JSON, else JSON without trailing commas, else a Python literal (single quotes)."""
    try:
        return json.loads(span), None
    except RecursionError:
        return None, "JSON nested too deeply"
    except ValueError as exc:
        error = f"invalid JSON: {exc}"
    repaired = _TRAILING_COMMA.sub(_keep_string_or_closer, span)
    if repaired != span:
        try:
            return json.loads(repaired), None
        except (ValueError, RecursionError):
            pass
    if "'" in span:
        try:
            return ast.literal_eval(span), None
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
    return None, error


def _keep_string_or_closer(match: re.Match[str]) -> str:
    return match.group(1) or match.group(2)


def _join(pieces: list[str | None]) -> str:
    """Kept text with each cut closed up: the pieces around a cut are trimmed at it."""
    parts: list[str] = []
    current: list[str] = []
    for piece in pieces:
        if piece is None:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(piece)
    parts.append("".join(current).strip())
    return "\n".join(part for part in parts if part)


# -- early detection ---------------------------------------------------------------------


def _starts_like_call(head: str) -> bool | None:
    if not head:
        return None
    if head.startswith(_TAG_STARTS):
        return True
    if head.startswith("```"):
        newline = head.find("\n")
        if newline < 0:
            return None
        if head[3:newline].strip().lower() not in _FENCE_LANGS:
            return False
        inner = head[newline + 1 :].lstrip()
        return True if inner.startswith("[") else _starts_like_call(inner)
    if head[0] == "{":
        return _first_key_is_a_call_key(head)
    if any(prefix.startswith(head) for prefix in _PREFIXES):
        return None
    return False


def _first_key_is_a_call_key(head: str) -> bool | None:
    body = head[1:].lstrip()
    if not body:
        return None
    quote = body[0]
    if quote not in "\"'":
        return False
    end = body.find(quote, 1)
    if end < 0:
        return None
    return body[1:end] in _CALL_KEYS
