"""What the local model is shown and may choose: the transcript in its chat template's
roles, the tool list, the options of the decide step and its grammar (see `llama_local`
for why the prompt is shaped this way). Plain Python, kept apart from the provider's
threading and llama.cpp calls so each file has one job.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from seam.contracts.messages import Message, ToolCall
from seam.contracts.model import ModelError, ModelRequest, ToolDefinition

if TYPE_CHECKING:
    from llama_cpp.llama_types import ChatCompletionRequestMessage

ANSWER = "answer"
_DESCRIPTION_CHARS = 120
_REQUEST_CHARS = 400


def next_options(request: ModelRequest, max_tool_rounds: int) -> tuple[str, ...]:
    """What the model may do next, as names: () means answer, one name means call it.

    The round limit applies to "auto" only: "required" or a tool name is the caller's
    explicit wish and is honoured.
    """
    names = tuple(tool.name for tool in request.tools)
    choice = request.tool_choice
    if not names or choice == "none":
        return ()
    if ANSWER in names:
        raise ModelError(
            "fatal",
            f"a tool named {ANSWER!r} clashes with the local model's choice to answer; "
            "rename the tool",
        )
    if choice == "required":
        return names
    if choice == "auto":
        return (ANSWER, *names) if _tool_rounds(request.messages) < max_tool_rounds else ()
    if choice in names:
        return (choice,)
    raise ModelError(
        "fatal", f"tool_choice {choice!r} is not one of the offered tools: {', '.join(names)}"
    )


def _tool_rounds(messages: Sequence[Message]) -> int:
    """Tool rounds since the user last spoke: assistant turns that called tools."""
    rounds = 0
    for message in reversed(messages):
        if message.role == "user":
            break
        if message.role == "assistant" and message.tool_calls:
            rounds += 1
    return rounds


def last_user_text(messages: Sequence[Message]) -> str:
    """The user's latest words on one line, cut short: the request the arguments step
    repeats so the small model sees what the call is for."""
    for message in reversed(messages):
        if message.role == "user":
            text = " ".join(message.content.split())
            return text if len(text) <= _REQUEST_CHARS else text[:_REQUEST_CHARS] + "..."
    return ""


def tools_text(tools: Sequence[ToolDefinition]) -> str:
    """The tool list for the system message, each with its first description line and
    the choice to answer last."""
    if not tools:
        return ""
    lines = [f"- {tool.name}: {_summary(tool.description)}" for tool in tools]
    lines.append(f"- {ANSWER}: reply with text, no tool.")
    return "\nTools:\n" + "\n".join(lines)


def _summary(description: str) -> str:
    """A description's first line, cut short: the small model's context is precious."""
    line = description.strip().split("\n", 1)[0]
    return line if len(line) <= _DESCRIPTION_CHARS else line[:_DESCRIPTION_CHARS] + "..."


def chat_messages(
    system: str, tools_text: str, messages: Sequence[Message]
) -> list[ChatCompletionRequestMessage]:
    """The transcript in the chat-template roles the model was trained on.

    The tool list sits in the system message even when the model must answer, so every
    step and every turn shares the same cached prefix.
    """
    out: list[dict[str, str]] = []
    system_text = system + tools_text
    if system_text:
        out.append({"role": "system", "content": system_text})
    calls: dict[str, ToolCall] = {}
    for message in messages:
        if message.role == "tool":
            call = calls.get(message.tool_call_id or "")
            label = message.name or (call.name if call else "tool")
            if call is not None:
                label = f"{label} {call.arguments}"
            result = f"Result of {label}:\n{message.content}"
            if out and out[-1]["role"] == "user":
                out[-1]["content"] += "\n\n" + result
            else:
                out.append({"role": "user", "content": result})
        elif message.role == "assistant" and message.tool_calls:
            calls.update((call.id, call) for call in message.tool_calls)
        else:
            out.append({"role": message.role, "content": message.content})
    return [_template_message(item["role"], item["content"]) for item in out]


def _template_message(role: str, content: str) -> ChatCompletionRequestMessage:
    """One message as the chat formatter types it (tool results are user turns by now)."""
    if role == "system":
        return {"role": "system", "content": content}
    if role == "assistant":
        return {"role": "assistant", "content": content}
    return {"role": "user", "content": content}


def choice_grammar(options: Sequence[str]) -> str:
    """The decide step's grammar: exactly one of the option names."""
    # The leading space lets the model write " read_file" as BPE tokens it knows,
    # instead of starting a word right after a bare space token.
    return 'root ::= " " (' + " | ".join(json.dumps(option) for option in options) + ")"
