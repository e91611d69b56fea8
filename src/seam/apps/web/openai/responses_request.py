"""A `/v1/responses` body as an `Asked`, like a chat request (`chat_request.py`).

`input` is a string (one user message) or a list of items: messages (`input_text` and
`output_text` parts; an image or file part is a 400 naming it), `function_call` items
(they join the assistant message before them) and `function_call_output` items (the
client's tool results). `instructions` is a system message. Nothing is stored between
requests: `previous_response_id` is refused (send the whole conversation, or use
`X-Seam-Session`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from seam.apps.web.openai.answer import answer_format
from seam.apps.web.openai.fields import (
    Rules,
    an_object,
    basics,
    client_tools,
    max_tokens,
    sampling,
)
from seam.apps.web.openai.fields import tool_choice as choice_of
from seam.apps.web.openai.messages import refuse, text_of
from seam.apps.web.openai.turn import Asked
from seam.contracts.messages import ImagePart, Message, ToolCall
from seam.contracts.turn_extras import TurnExtras

HONOURED = frozenset(
    {
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "stream",
        "max_output_tokens",
        "temperature",
        "text",
    }
)
# This API's own fields that are fine with a value asking for nothing.
NEUTRAL: Rules = {
    "previous_response_id": (
        lambda v: v is None,
        "is not supported: send the whole conversation in input (or use X-Seam-Session)",
    ),
    "conversation": (lambda v: v is None, "is not supported: use X-Seam-Session"),
    "include": (lambda v: not v, "is not supported"),
    "truncation": (lambda v: v in (None, "disabled"), "only 'disabled' is supported"),
    "reasoning": (lambda v: not v, "is not supported"),
    "background": (lambda v: not v, "is not supported"),
    "max_tool_calls": (lambda v: v is None, "is not supported"),
    "prompt": (lambda v: v is None, "is not supported"),
    "stream_options": (lambda v: v is None or isinstance(v, dict), "must be an object"),
}
_ROLES = {"user": "user", "system": "system", "developer": "system", "assistant": "assistant"}
_PARTS = ("input_text", "output_text", "text", "refusal")


def responses_request(body: Any, own_tools: frozenset[str]) -> Asked:
    """Check the body and reduce it; `own_tools`: names a client tool may not take."""
    model, stream = basics(body, HONOURED, NEUTRAL)
    history = _items(body.get("input"))
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise refuse("instructions", "must be a string")
    if instructions:
        history.insert(0, Message("system", instructions))
    text = an_object(body, "text")
    asked_format = answer_format(text.get("format"), "text.format")
    extras = TurnExtras(
        external=client_tools(body.get("tools"), own_tools, nested=False),
        sampling=sampling(
            body, max_tokens(body, "max_output_tokens"), choice_of(body.get("tool_choice"))
        ),
        note=None if asked_format is None else asked_format.note(),
    )
    return Asked(model, history, stream, extras, format=asked_format)


def _items(raw: Any) -> list[Message]:
    if isinstance(raw, str) and raw.strip():
        return [Message("user", raw)]
    if not isinstance(raw, list) or not raw:
        raise refuse("input", "must be a non-empty string or a list of items")
    out: list[Message] = []
    names: dict[str, str] = {}
    for i, item in enumerate(raw):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise refuse(where, "must be an object")
        kind = str(item.get("type", "message"))
        if kind == "message":
            role = _ROLES.get(str(item.get("role")))
            if role is None:
                raise refuse(f"{where}.role", f"unknown role {item.get('role')!r}")
            images: list[ImagePart] | None = [] if role == "user" else None
            content = _content(item.get("content"), f"{where}.content", images)
            shown = tuple(images or ())
            out.append(Message(role, content, images=shown))  # type: ignore[arg-type]
        elif kind == "function_call":
            _add_call(out, _call(item, where))
            names[str(item.get("call_id"))] = str(item.get("name"))
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                raise refuse(f"{where}.call_id", "must name the call it answers")
            output = _content(item.get("output"), f"{where}.output")
            out.append(Message("tool", output, tool_call_id=call_id, name=names.get(call_id)))
        elif kind != "reasoning":  # a reasoning item of an earlier answer: nothing to keep
            raise refuse(f"{where}.type", f"{kind!r} items are not supported")
    return out


def _content(raw: Any, where: str, images: list[ImagePart] | None = None) -> str:
    """A message's or output's text: a string or text parts; an image joins `images`
    (a 400 where none are taken); a file part is a 400."""
    if isinstance(raw, list):
        for j, part in enumerate(raw):
            kind = str(part.get("type")) if isinstance(part, dict) else None
            if kind not in _PARTS and kind not in ("input_image", "image_url"):
                raise refuse(f"{where}[{j}]", f"{kind!r} parts are not supported (text only)")
    return text_of(raw, where, images)


def _call(item: dict[str, Any], where: str) -> ToolCall:
    call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments")
    if not all(isinstance(v, str) for v in (call_id, name, arguments)) or not call_id:
        raise refuse(where, "a function_call needs call_id, name and arguments")
    return ToolCall(str(call_id), str(name), str(arguments))


def _add_call(out: list[Message], call: ToolCall) -> None:
    """A call joins the assistant message just before it (else starts one)."""
    if out and out[-1].role == "assistant":
        out[-1] = replace(out[-1], tool_calls=(*out[-1].tool_calls, call))
    else:
        out.append(Message("assistant", "", tool_calls=(call,)))


__all__ = ["HONOURED", "NEUTRAL", "responses_request"]
