"""Tool-call arguments checked against the tool's JSON Schema before the tool runs.

Unit level: the validator's messages (one sentence naming the argument, the rule and what
was sent) and every built-in schema. Loop level: a call that breaks its schema reaches
the model as one error result, through AgentLoop and the real registry, and the tool's
`run` is never called.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from seam.contracts.events import ToolEnd
from seam.contracts.tools import ArgumentError, ToolContext, ToolError
from seam.core import AgentLoop, InMemoryStorage, ScriptedModel, call, text_step, tool_step
from seam.core.tool_registry import CheckedTool, DefaultToolRegistry
from seam.plugins.tools.arguments import JsonSchemaValidator
from seam.wiring.tools import build_tool_registry

SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1},
        "offset": {"type": "integer", "minimum": 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        "ratio": {"type": "number", "exclusiveMinimum": 0},
        "force": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "tags": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 2},
        "note": {"type": "string", "maxLength": 5},
    },
    "required": ["path"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument 'path'"),
        ({"path": 3}, "'path' must be a string (got 3)"),
        ({"path": ""}, "'path' must not be empty"),
        ({"path": "a", "offset": 0}, "'offset' must be >= 1 (got 0)"),
        ({"path": "a", "offset": 1.5}, "'offset' must be an integer (got 1.5)"),
        ({"path": "a", "offset": False}, "'offset' must be an integer (got false)"),
        ({"path": "a", "limit": 51}, "'limit' must be <= 50 (got 51)"),
        ({"path": "a", "ratio": 0}, "'ratio' must be > 0 (got 0)"),
        ({"path": "a", "force": "yes"}, "'force' must be true or false (got \"yes\")"),
        ({"path": "a", "mode": "slowly"}, '\'mode\' must be one of "fast", "slow" (got "slowly")'),
        ({"path": "a", "tags": ["x", ""]}, "'tags[1]' must not be empty"),
        ({"path": "a", "tags": ["x", "y", "z"]}, "'tags' must have at most 2 items (got 3)"),
        ({"path": "a", "note": "too long"}, "'note' must be at most 5 characters (got 8)"),
        (
            {"path": "a", "lines": 5, "file": "b"},
            "unknown arguments 'lines', 'file' (expected: path, offset, limit, ratio, force, "
            "mode, tags, note)",
        ),
    ],
)
def test_a_broken_rule_is_one_sentence_naming_the_argument(
    args: dict[str, Any], message: str
) -> None:
    with pytest.raises(ArgumentError) as info:
        JsonSchemaValidator().validate(SCHEMA, args)
    assert str(info.value) == message


def test_arguments_that_fit_are_handed_on_unchanged() -> None:
    args = {"path": "a", "offset": 2, "tags": ["x"]}
    assert JsonSchemaValidator().validate(SCHEMA, args) is args


def test_quoted_scalars_become_what_the_schema_asks_for() -> None:
    """Small models quote numbers and booleans; the tool gets the value they spell."""
    validator = JsonSchemaValidator()
    args = {"path": "a", "offset": " 12", "ratio": "0.5", "force": "True"}
    assert validator.validate(SCHEMA, args) == {
        "path": "a",
        "offset": 12,
        "ratio": 0.5,
        "force": True,
    }
    assert args["offset"] == " 12"  # the model's own arguments are not rewritten
    with pytest.raises(ArgumentError, match=r"'offset' must be >= 1 \(got 0\)"):
        validator.validate(SCHEMA, {"path": "a", "offset": "0"})
    with pytest.raises(ArgumentError, match=r"'offset' must be an integer \(got \"1.5\"\)"):
        validator.validate(SCHEMA, {"path": "a", "offset": "1.5"})
    with pytest.raises(ArgumentError, match="'path' must be a string"):
        validator.validate(SCHEMA, {"path": 12})  # strings are never guessed from numbers


def test_an_equal_schema_rebuilt_per_tool_instance_is_compiled_once() -> None:
    validator = JsonSchemaValidator()
    first = validator._compiled(dict(SCHEMA))
    assert validator._compiled(dict(SCHEMA)) is first
    assert validator._compiled({**SCHEMA, "required": []}) is not first


def test_an_unusable_schema_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="type"):
        JsonSchemaValidator().validate({"type": "text"}, {})


# --- every built-in tool --------------------------------------------------------------


def _built_in() -> list[Any]:
    registry = build_tool_registry(workflows=True)
    return registry.build(None, ToolContext(session_key="s", storage=InMemoryStorage()))


def test_every_built_in_schema_compiles_and_refuses_unknown_arguments() -> None:
    validator = JsonSchemaValidator()
    tools = _built_in()
    assert len(tools) == 16
    for tool in tools:
        assert isinstance(tool, CheckedTool), tool.name
        schema = tool.parameters
        assert schema["additionalProperties"] is False, tool.name
        required = schema.get("required", [])
        if required:
            with pytest.raises(ArgumentError, match="missing required argument"):
                validator.validate(schema, {})
        minimal = {name: _example(schema["properties"][name]) for name in required}
        assert validator.validate(schema, minimal) == minimal
        with pytest.raises(ArgumentError, match="unknown argument 'bogus'"):
            validator.validate(schema, minimal | {"bogus": 1})


def _example(schema: Mapping[str, Any]) -> Any:
    if "enum" in schema:
        return schema["enum"][0]
    return {"string": "x", "integer": 1, "number": 1.0, "boolean": True}[schema["type"]]


def test_schemas_declare_the_constraints_their_tools_rely_on() -> None:
    schemas = {tool.name: tool.parameters["properties"] for tool in _built_in()}
    assert schemas["read_file"]["offset"]["minimum"] == 1
    assert schemas["read_file"]["limit"]["minimum"] == 1
    assert schemas["read_file"]["path"]["minLength"] == 1
    assert schemas["web_fetch"]["max_chars"]["minimum"] == 1
    assert schemas["terminal"]["timeout"]["exclusiveMinimum"] == 0
    assert schemas["terminal"]["timeout"]["maximum"] == 3600
    assert schemas["session_search"]["limit"] == {"type": "integer", "minimum": 1, "maximum": 20}
    assert schemas["todo"]["id"]["minimum"] == 1
    assert schemas["memory"]["action"]["enum"] == ["add", "replace", "remove"]
    assert schemas["memory"]["target"]["enum"] == ["memory", "user"]
    assert schemas["process"]["action"]["enum"] == ["list", "poll", "kill"]
    assert schemas["clarify"]["question"]["maxLength"] == 1000


# --- through the loop -----------------------------------------------------------------


@dataclass
class Spy:
    """A tool that records every run, with a schema like read_file's."""

    name: str = "peek"
    description: str = "Read a page."
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {
            "type": "object",
            "properties": {"path": {"type": "string"}, "offset": {"type": "integer", "minimum": 1}},
            "required": ["path"],
        }
    )
    concurrent: bool = True
    idempotent: bool = True
    runs: list[Mapping[str, Any]] = field(default_factory=list)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        self.runs.append(args)
        return f"page of {args['path']} from {args.get('offset', 1)}"


def _loop(spy: Spy, *steps: Any) -> tuple[AgentLoop, ScriptedModel]:
    model = ScriptedModel([*steps])
    registry = DefaultToolRegistry(validator=JsonSchemaValidator())
    registry.register_tool(spy)
    return AgentLoop(model=model, tools=registry), model


async def test_a_call_that_breaks_the_schema_never_reaches_the_tool() -> None:
    spy = Spy()
    loop, model = _loop(
        spy,
        tool_step(call("peek", path="note.txt", offset=0)),
        tool_step(call("peek", path="note.txt", offset="2")),
        text_step("done"),
    )
    events = [e async for e in loop.run("s", "read it")]
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert [(e.is_error, e.result) for e in ends] == [
        (True, "error: invalid arguments for peek: 'offset' must be >= 1 (got 0)"),
        (False, "page of note.txt from 2"),
    ]
    assert spy.runs == [{"path": "note.txt", "offset": 2}]  # only the second call ran
    # The model reads the error as the call's result, in the same shape as any tool error.
    first_result = [m for m in model.requests[1].messages if m.role == "tool"]
    assert [m.content for m in first_result] == [ends[0].result]


async def test_arguments_that_are_not_json_get_one_clear_error() -> None:
    spy = Spy()
    loop, _ = _loop(
        spy,
        tool_step(call("peek", '{"path": "note.txt", "offset": }')),
        tool_step(call("peek", '["note.txt"]')),
        text_step("done"),
    )
    events = [e async for e in loop.run("s", "read it")]
    results = [e.result for e in events if isinstance(e, ToolEnd)]
    assert results[0].startswith("error: arguments for peek are not valid JSON (")
    assert results[0].endswith("); send a JSON object")
    assert results[1] == "error: arguments for peek must be a JSON object"
    assert spy.runs == []


async def test_the_built_in_read_file_refuses_offset_zero_before_reading() -> None:
    storage = InMemoryStorage({"/work/note.txt": "buy milk\n"})
    model = ScriptedModel(
        [
            tool_step(call("read_file", path="note.txt", offset=0, limit=1000)),
            tool_step(call("read_file", path="note.txt")),
            text_step("It says buy milk"),
        ]
    )
    loop = AgentLoop(model=model, tools=build_tool_registry(), storage=storage, working_dir="/work")
    events = [e async for e in loop.run("s", "What does note.txt say? Use read_file.")]
    results = [e.result for e in events if isinstance(e, ToolEnd)]
    assert results == [
        "error: invalid arguments for read_file: 'offset' must be >= 1 (got 0)",
        "1|buy milk",
    ]


async def test_a_tool_with_an_unusable_schema_says_so_and_does_not_run() -> None:
    spy = Spy(parameters={"type": "object", "properties": {"path": {"type": "text"}}})
    with pytest.raises(ToolError, match="peek cannot be called: its parameter schema is invalid"):
        await CheckedTool(spy, JsonSchemaValidator()).run(
            {"path": "x"}, ToolContext(session_key="s", storage=InMemoryStorage())
        )
    assert spy.runs == []


def test_a_static_tool_keeps_one_wrapper_across_builds() -> None:
    """So its cached definition (and the request prefix) stays the same turn to turn."""
    registry = DefaultToolRegistry(validator=JsonSchemaValidator())
    registry.register_tool(Spy())
    ctx = ToolContext(session_key="s", storage=InMemoryStorage())
    assert registry.build(None, ctx)[0] is registry.build(None, ctx)[0]
    assert DefaultToolRegistry().build(None, ctx) == []
