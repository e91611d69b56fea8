"""Recovering tool calls that a model wrote as text, shape by shape.

Every row is a reply seen from real local models (Qwen/Hermes, Llama 3.1, Mistral, and
small models imitating them) with what recovery must make of it: which calls run, what
text the user still sees, and why anything was refused.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import pytest

from seam.contracts.model import ToolDefinition
from seam.services.llm.text_tool_calls import recover_tool_calls, schema_error, starts_like_call

READ_FILE = ToolDefinition(
    "read_file",
    "Read a file.",
    {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "encoding": {"type": "string", "enum": ["utf-8", "latin-1"]},
        },
        "required": ["path"],
    },
)
WRITE_FILE = ToolDefinition(
    "write_file",
    "Write a file.",
    {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "text": {"type": "string"},
            "append": {"type": "boolean"},
        },
        "required": ["path", "text"],
        "additionalProperties": False,
    },
)
SEARCH = ToolDefinition(
    "search",
    "Search notes.",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["query"],
    },
)
LIST_TODOS = ToolDefinition("list_todos", "List todos.", {"type": "object", "properties": {}})
TOOLS = (READ_FILE, WRITE_FILE, SEARCH, LIST_TODOS)

Calls = list[tuple[str, dict[str, Any]]]


class Case(NamedTuple):
    text: str
    calls: Calls
    remaining: str | None  # None: the text is left exactly as it was
    rejected: tuple[str, ...] = ()  # a fragment each rejection reason must contain


READ_A = [("read_file", {"path": "a.txt"})]
CASES: dict[str, Case] = {
    # -- Hermes / Qwen -------------------------------------------------------------------
    "hermes block": Case(
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>',
        READ_A,
        "",
    ),
    "hermes block never closed (generation stopped at the tag)": Case(
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}', READ_A, ""
    ),
    "hermes blocks after prose": Case(
        "I'll read both.\n"
        '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>\n'
        '<tool_call>{"name": "read_file", "arguments": {"path": "b.txt"}}</tool_call>',
        [*READ_A, ("read_file", {"path": "b.txt"})],
        "I'll read both.",
    ),
    "two calls inside one hermes block": Case(
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n'
        '{"name": "list_todos", "arguments": {}}\n</tool_call>',
        [*READ_A, ("list_todos", {})],
        "",
    ),
    "arguments as a nested JSON string": Case(
        '<tool_call>{"name": "search", "arguments": "{\\"query\\": \\"tax\\", \\"limit\\": 3}"}'
        "</tool_call>",
        [("search", {"query": "tax", "limit": 3})],
        "",
    ),
    # -- bare JSON -----------------------------------------------------------------------
    "bare object: name and arguments": Case(
        '{"name": "read_file", "arguments": {"path": "a.txt"}}', READ_A, ""
    ),
    "bare object: tool and parameters": Case(
        '{"tool": "search", "parameters": {"query": "rent", "tags": ["home"]}}',
        [("search", {"query": "rent", "tags": ["home"]})],
        "",
    ),
    "bare object: function names the tool": Case(
        '{"function": "list_todos", "arguments": {}}', [("list_todos", {})], ""
    ),
    "OpenAI's own envelope written out": Case(
        '{"type": "function", "function": {"name": "read_file", '
        '"arguments": "{\\"path\\": \\"a.txt\\"}"}}',
        READ_A,
        "",
    ),
    "bare call with prose before and after": Case(
        'Let me check. {"name": "read_file", "arguments": {"path": "a.txt"}} One moment.',
        READ_A,
        "Let me check.\nOne moment.",
    ),
    "bare list of calls": Case(
        '[{"name": "read_file", "arguments": {"path": "a.txt"}}, {"name": "list_todos"}]',
        [*READ_A, ("list_todos", {})],
        "",
    ),
    "a tool without arguments named on its own": Case(
        '{"name": "list_todos"}', [("list_todos", {})], ""
    ),
    # -- fences --------------------------------------------------------------------------
    "fenced json block": Case(
        'Here you go:\n```json\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n```',
        READ_A,
        "Here you go:",
    ),
    "hermes block inside a fence, prose after": Case(
        '```tool_call\n<tool_call>{"name": "list_todos", "arguments": {}}</tool_call>\n```'
        "\nThen I will summarise.",
        [("list_todos", {})],
        "Then I will summarise.",
    ),
    "fence without a language holding a list": Case(
        '```\n[{"name": "list_todos", "arguments": {}}, '
        '{"name": "search", "arguments": {"query": "x"}}]\n```',
        [("list_todos", {}), ("search", {"query": "x"})],
        "",
    ),
    "fenced python code is code, not a call": Case(
        '```python\nrequest = {"name": "read_file", "arguments": {"path": "a.txt"}}\n```',
        [],
        None,
    ),
    # -- Mistral -------------------------------------------------------------------------
    "mistral [TOOL_CALLS] list": Case(
        '[TOOL_CALLS] [{"name": "read_file", "arguments": {"path": "a.txt"}}]</s>', READ_A, ""
    ),
    "mistral v11 name[ARGS]": Case(
        '[TOOL_CALLS]search[ARGS]{"query": "flights", "limit": 5}',
        [("search", {"query": "flights", "limit": 5})],
        "",
    ),
    # -- Llama 3.1 -----------------------------------------------------------------------
    "llama <function=name>": Case('<function=read_file>{"path": "a.txt"}</function>', READ_A, ""),
    "llama <function=name> with no arguments": Case(
        "<function=list_todos></function>", [("list_todos", {})], ""
    ),
    "a closing tag inside a string argument does not end the call": Case(
        '<function=write_file>{"path": "a.html", "text": "<script>function f() {}'
        '</function></script>"}</function> Written.',
        [("write_file", {"path": "a.html", "text": "<script>function f() {}</function></script>"})],
        "Written.",
    ),
    "llama <|python_tag|> with parameters": Case(
        '<|python_tag|>{"name": "read_file", "parameters": {"path": "a.txt"}}<|eom_id|>',
        READ_A,
        "",
    ),
    "llama <|python_tag|> with two calls separated by ;": Case(
        '<|python_tag|>{"name": "read_file", "parameters": {"path": "a.txt"}}; '
        '{"name": "list_todos", "parameters": {}}',
        [*READ_A, ("list_todos", {})],
        "",
    ),
    "llama built-in python call syntax is not JSON": Case(
        '<|python_tag|>brave_search.call(query="weather")<|eom_id|>',
        [],
        None,
        ("holds no JSON object",),
    ),
    # -- repaired JSON -------------------------------------------------------------------
    "trailing commas are repaired": Case(
        '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt",},}</tool_call>',
        READ_A,
        "",
    ),
    "python literal with single quotes is repaired": Case(
        "<tool_call>{'name': 'write_file', 'arguments': {'path': 'a.txt', 'text': "
        "\"it's\", 'append': True}}</tool_call>",
        [("write_file", {"path": "a.txt", "text": "it's", "append": True})],
        "",
    ),
    # -- content -------------------------------------------------------------------------
    "unicode arguments survive as they are": Case(
        '<tool_call>{"name": "write_file", "arguments": {"path": "über/日記.md", '
        '"text": "Grüße 👋 — ok"}}</tool_call>',
        [("write_file", {"path": "über/日記.md", "text": "Grüße 👋 — ok"})],
        "",
    ),
    "JSON and tags inside a string argument stay in the string": Case(
        '<tool_call>{"name": "write_file", "arguments": {"path": "c.json", '
        '"text": "{\\"a\\": [1, 2]} </tool_call> }"}}</tool_call>',
        [("write_file", {"path": "c.json", "text": '{"a": [1, 2]} </tool_call> }'})],
        "",
    ),
    # -- refused: the text stays text ----------------------------------------------------
    "wrong tool name": Case(
        '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>',
        [],
        None,
        ("'delete_everything' is not an offered tool (offered: list_todos, read_file",),
    ),
    "wrong tool name in <function=>": Case(
        '<function=rm_rf>{"path": "/"}</function>', [], None, ("'rm_rf' is not an offered",)
    ),
    "bare call to an unknown tool": Case(
        'Calling {"name": "send_email", "arguments": {"to": "x@y.z"}} now.',
        [],
        None,
        ("'send_email' is not an offered tool",),
    ),
    "missing a required argument": Case(
        '<tool_call>{"name": "write_file", "arguments": {"path": "a.txt"}}</tool_call>',
        [],
        None,
        ("write_file: missing the required property 'text'",),
    ),
    "argument of the wrong type": Case(
        '<tool_call>{"name": "search", "arguments": {"query": "x", "limit": "ten"}}</tool_call>',
        [],
        None,
        ("search: 'limit' should be integer, got string",),
    ),
    "array item of the wrong type": Case(
        '{"name": "search", "arguments": {"query": "x", "tags": ["a", 2]}}',
        [],
        None,
        ("'tags[1]' should be string, got number",),
    ),
    "value outside the enum": Case(
        '<tool_call>{"name": "read_file", "arguments": {"path": "a", "encoding": "utf-16"}}'
        "</tool_call>",
        [],
        None,
        ('\'encoding\' must be one of "utf-8", "latin-1", got "utf-16"',),
    ),
    "argument the schema does not allow": Case(
        '<tool_call>{"name": "write_file", "arguments": {"path": "a", "text": "b", '
        '"mode": "0777"}}</tool_call>',
        [],
        None,
        ("unknown property 'mode' (allowed: path, text, append)",),
    ),
    "arguments that are not an object": Case(
        '<tool_call>{"name": "read_file", "arguments": ["a.txt"]}</tool_call>',
        [],
        None,
        ("arguments must be a JSON object, got array",),
    ),
    "JSON cut off mid-call": Case(
        '<tool_call>{"name": "read_file", "arguments": {"path": "a.t',
        [],
        None,
        ("unterminated JSON",),
    ),
    "JSON that no repair can fix": Case(
        '<tool_call>{"name": read_file, "arguments": {}}</tool_call>',
        [],
        None,
        ("invalid JSON",),
    ),
    "a block that is not call-shaped": Case(
        '<tool_call>{"path": "a.txt"}</tool_call>', [], None, ("not a tool call",)
    ),
    "one bad call refuses its whole block": Case(
        '[TOOL_CALLS] [{"name": "read_file", "arguments": {"path": "a.txt"}}, '
        '{"name": "read_file", "arguments": {}}]',
        [],
        None,
        ("read_file: missing the required property 'path'",),
    ),
    "a good block is used even when another is refused": Case(
        '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>\n'
        '<tool_call>{"name": "format_disk", "arguments": {}}</tool_call>',
        READ_A,
        '<tool_call>{"name": "format_disk", "arguments": {}}</tool_call>',
        ("'format_disk' is not an offered tool",),
    ),
    # -- prose that merely mentions JSON -------------------------------------------------
    "a JSON record in prose is data": Case(
        'The API returns {"name": "Ada", "age": 36} for each user.', [], None
    ),
    "braces in prose": Case("Use {placeholders} like {name} in templates.", [], None),
    "a record naming a tool but with other fields is data": Case(
        'Row: {"name": "read_file", "calls": 12, "errors": 0}', [], None
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_recovery_table(case: Case) -> None:
    recovery = recover_tool_calls(case.text, TOOLS)

    assert [(call.name, json.loads(call.arguments)) for call in recovery.calls] == case.calls
    expected_text = case.text if case.remaining is None else case.remaining
    assert recovery.remaining_text == expected_text
    assert len(recovery.rejected) == len(case.rejected), recovery.rejected
    for reason, fragment in zip(recovery.rejected, case.rejected, strict=True):
        assert fragment in reason
    ids = [call.id for call in recovery.calls]
    assert len(set(ids)) == len(ids)
    assert all(call_id.startswith("call_") for call_id in ids)


def test_the_table_covers_at_least_twenty_shapes() -> None:
    assert len(CASES) >= 20


def test_arguments_are_passed_on_as_compact_unescaped_json() -> None:
    text = '<tool_call>{"name": "write_file", "arguments": {"path": "ü.md", "text": "ß"}}'

    (call,) = recover_tool_calls(text, TOOLS).calls

    assert call.arguments == '{"path": "ü.md", "text": "ß"}'


def test_nothing_is_recovered_when_no_tools_are_offered() -> None:
    text = '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>'

    recovery = recover_tool_calls(text, ())

    assert (recovery.calls, recovery.remaining_text, recovery.rejected) == ([], text, [])


def test_deeply_nested_json_is_refused_not_a_crash() -> None:
    text = '<tool_call>{"name": "search", "arguments": ' + "[" * 5000 + "]" * 5000 + "}"

    recovery = recover_tool_calls(text, TOOLS)

    assert recovery.calls == []
    assert "nested deeper" in recovery.rejected[0]


# -- the schema subset -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"n": 3, "flag": True, "ratio": 0.5}, None),
        ({"n": 3.0}, None),  # JSON does not tell 3 from 3.0
        ({"n": True}, "'n' should be integer, got boolean"),
        ({"ratio": False}, "'ratio' should be number, got boolean"),
        ({"flag": 1}, "'flag' should be boolean, got number"),
        ({"level": 1}, "'level' must be one of true, 1.5"),  # True == 1 in Python only
        ({"maybe": None}, None),
        ({"maybe": "x"}, None),
        ({"maybe": 4}, "'maybe' should be string or null, got number"),
        ({"nested": {"inner": 1}}, "'nested.inner' should be string, got number"),
        ({"nested": {}}, "missing the required property 'nested.inner'"),
        ({"unknown": 1}, None),  # additional properties are allowed unless forbidden
    ],
)
def test_schema_subset(arguments: dict[str, Any], error: str | None) -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean"},
            "level": {"enum": [True, 1.5]},
            "maybe": {"type": ["string", "null"]},
            "nested": {
                "type": "object",
                "properties": {"inner": {"type": "string"}},
                "required": ["inner"],
            },
        },
    }

    found = schema_error(arguments, schema)

    if error is None:
        assert found is None
    else:
        assert found is not None and error in found


# -- deciding early whether streamed text may be a call ----------------------------------


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("", None),
        ("  \n", None),
        ("<", None),
        ("<tool", None),
        ("<tool_call>", True),
        (" <function=read_file>", True),
        ("<|python_tag|>", True),
        ("[TOOL_CA", None),
        ("[TOOL_CALLS]", True),
        ("[1] See the notes", False),
        ("{", None),
        ('{"na', None),
        ('{"name"', True),
        ("{'tool'", True),
        ('{"type": "function"', True),
        ('{"answer": 42}', False),
        ("{x}", False),
        ("``", None),
        ("```json", None),
        ("```json\n", None),
        ('```json\n{"name"', True),
        ('```\n[{"name"', True),
        ("```python\nprint(1)", False),
        ("Sure, here it is", False),
        ("<b>bold</b>", False),
        (" " * 300, False),  # never undecided for long
    ],
)
def test_starts_like_call(text: str, verdict: bool | None) -> None:
    assert starts_like_call(text) is verdict
