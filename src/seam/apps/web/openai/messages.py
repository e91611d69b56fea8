"""An OpenAI chat request's `messages` as transcript messages: the history a stateless
request seeds its one-off session with, and the tool results that continue a turn.

Text parts are joined. An image part (a base64 `data:` URL; Seam fetches no image URL)
becomes an `ImagePart` on its message and a placeholder line in its text (type, size,
SHA-256); only the newest user message's images reach the model, and only one that sees
images (`turn.py` refuses them with a 400 otherwise). `assistant` messages keep their
`tool_calls` and `tool` messages their `tool_call_id`, so a conversation with the
client's own tools reads back exactly as the model wrote it.
"""

from __future__ import annotations

from typing import Any

from seam.apps.web.errors import ApiError
from seam.contracts.images import decode_image
from seam.contracts.messages import ImagePart, Message, ToolCall

_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
IMAGE_PARTS = ("image_url", "input_image", "image")


def refuse(field: str, why: str) -> ApiError:
    """The 400 every refused field gets: its name first, then why."""
    return ApiError(400, f"{field}: {why}", "invalid_request_error")


def text_of(content: Any, where: str, images: list[ImagePart] | None = None) -> str:
    """A message's text: a string, or the text of its parts. An image part joins `images`
    (a 400 where no images are taken: `images` None) and leaves its placeholder line."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise refuse(where, "must be a string or a list of parts")
    texts = []
    for j, part in enumerate(content):
        if isinstance(part, dict) and str(part.get("type")) in IMAGE_PARTS:
            texts.append(_image(part, f"{where}[{j}]", images))
        # Only text parts with string text (`{"text": 5}` was a 500, found by fuzzing).
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "".join(texts)


def _image(part: dict[str, Any], where: str, images: list[ImagePart] | None) -> str:
    """One image part (chat's `image_url: {url}`, responses' `image_url: "..."`)."""
    if images is None:
        raise refuse(where, "image parts are taken only in user messages")
    url = part.get("image_url")
    url = url.get("url") if isinstance(url, dict) else url
    head, comma, data = url.partition(",") if isinstance(url, str) else ("", "", "")
    if not (head.startswith("data:") and head.endswith(";base64") and comma):
        raise refuse(where, "an image must be a base64 data: URL (Seam fetches no image URL)")
    shown, line = decode_image(head[5:].removesuffix(";base64"), data, len(images))
    if shown is None:
        raise refuse(where, line.strip("[]"))
    images.append(shown)
    return line


def transcript_messages(items: list[dict[str, Any]]) -> list[Message]:
    """OpenAI-style `messages` as transcript messages (text, tool calls, tool results)."""
    out: list[Message] = []
    names: dict[str, str] = {}  # call id -> tool name, for the tool messages
    for i, item in enumerate(items):
        where = f"messages[{i}]"
        if not isinstance(item, dict):
            raise refuse(where, "must be an object")
        role = item.get("role")
        role = role if isinstance(role, str) else repr(role)
        if role == "tool":
            out.append(_tool_result(item, where, names))
            continue
        if role == "function" or item.get("function_call"):
            raise refuse(f"{where}.function_call", "legacy functions are not supported: use tools")
        if role not in _ROLES:
            raise refuse(f"{where}.role", f"unknown role {role!r}")
        calls = _calls(item.get("tool_calls"), where) if role == "assistant" else ()
        names.update((c.id, c.name) for c in calls)
        images: list[ImagePart] | None = [] if role == "user" else None
        content = text_of(item.get("content"), f"{where}.content", images)
        shown = tuple(images or ())
        out.append(Message(_ROLES[role], content, tool_calls=calls, images=shown))  # type: ignore[arg-type]
    return out


def _tool_result(item: dict[str, Any], where: str, names: dict[str, str]) -> Message:
    call_id = item.get("tool_call_id")
    if not isinstance(call_id, str) or not call_id:
        raise refuse(f"{where}.tool_call_id", "a tool message needs the id of the call it answers")
    content = text_of(item.get("content"), f"{where}.content")
    return Message("tool", content, tool_call_id=call_id, name=names.get(call_id))


def _calls(raw: Any, where: str) -> tuple[ToolCall, ...]:
    if not raw:
        return ()
    if not isinstance(raw, list):
        raise refuse(f"{where}.tool_calls", "must be a list")
    calls = []
    for j, call in enumerate(raw):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(call.get("id"), str):
            raise refuse(f"{where}.tool_calls[{j}]", "needs an id and a function")
        name, arguments = function.get("name"), function.get("arguments") or "{}"
        if not isinstance(name, str) or not isinstance(arguments, str):
            raise refuse(f"{where}.tool_calls[{j}].function", "needs a name and arguments")
        calls.append(ToolCall(call["id"], name, arguments))
    return tuple(calls)


def trailing_results(history: list[Message]) -> list[Message]:
    """The tool results that end the history (what a request continuing a turn adds)."""
    i = len(history)
    while i > 0 and history[i - 1].role == "tool":
        i -= 1
    return history[i:]


__all__ = ["IMAGE_PARTS", "refuse", "text_of", "trailing_results", "transcript_messages"]
