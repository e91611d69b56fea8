"""Tool calls written as text: any text is recovered, left alone or rejected with a
reason, never an exception; a recovered call names an offered tool with valid JSON."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from seam.contracts.model import ToolDefinition
from seam.services.llm.text_tool_calls import recover_tool_calls, schema_error, starts_like_call

TOOLS = (
    ToolDefinition(
        "read_file",
        "read",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    ),
    ToolDefinition("lookup", "find", {"type": "object", "properties": {"n": {"type": "integer"}}}),
)
NAMES = {t.name for t in TOOLS}

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=10)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
call_objects = st.fixed_dictionaries(
    {"name": st.sampled_from(["read_file", "lookup", "rm", ""]) | st.text(max_size=5)},
    optional={
        "arguments": json_values | st.text(max_size=20),
        "parameters": json_values,
        "id": st.text(max_size=4),
    },
)
fragments = st.one_of(
    st.text(max_size=20),
    st.sampled_from(
        [
            "<tool_call>",
            "</tool_call>",
            "<function=read_file>",
            "</function>",
            "<|python_tag|>",
            "[TOOL_CALLS]",
            "[ARGS]",
            "```json\n",
            "```\n",
            "```",
            "{",
            "}",
            "[",
            "]",
            ",",
            "'",
            '"',
            "True",
            "None",
            "\\",
            "{{{{{{{{",
            "]]]]",
        ]
    ),
    call_objects.map(json.dumps),
    call_objects.map(lambda c: json.dumps(c).replace('"', "'")),
    st.lists(call_objects, max_size=3).map(json.dumps),
)
texts = st.lists(fragments, max_size=10).map("".join)


@given(texts)
@example('<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>')
@example("[TOOL_CALLS]read_file[ARGS]{'path': 'x',}")
@example("{" * 5000)
def test_recovery_never_raises_and_keeps_its_promises(text: str) -> None:
    recovery = recover_tool_calls(text, TOOLS)
    assert isinstance(recovery.remaining_text, str)
    if not recovery.calls:
        assert recovery.remaining_text == text
    for call in recovery.calls:
        assert call.name in NAMES
        arguments = json.loads(call.arguments)
        schema = next(t.parameters for t in TOOLS if t.name == call.name)
        assert schema_error(arguments, schema) is None
    assert starts_like_call(text) in (True, False, None)
