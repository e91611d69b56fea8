"""Images in tool results, on the wire of the providers whose models can see them.

A tool message may carry `images` (an MCP server's screenshot); its text already holds a
placeholder for each, which is all a model that cannot see images gets. Anthropic's
`tool_result` block takes image blocks beside its text, and every Claude model since 3
sees images. OpenAI's chat API takes no images in a `tool` message, so they follow the
run of tool messages as one `user` message of `image_url` parts, each introduced by the
call it came from; whether the model sees images is told by its name (`sees_images`),
and a model that does not gets the placeholders alone (an image sent to it would fail
the whole request).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from seam.contracts.messages import ImagePart, Message

# Model names of OpenAI-compatible models that take images (OpenAI's own and the common
# open vision families served by vLLM, llama.cpp, Ollama and the gateways), as patterns.
VISION_FAMILIES = (
    *("gpt-4o", r"gpt-4\.1", "gpt-4-turbo", "gpt-4-vision", "gpt-5", "chatgpt-4o"),
    *(r"(^|/)o[134](-|$)", "claude", "gemini", "llava", "vision", r"[-_.]vl\b", r"[-_.]vl[-_.]"),
    *("pixtral", "gemma-?3", "llama-?4", "minicpm-v", "moondream", r"qwen[23]?(\.5)?-?vl"),
    "mistral-(small|medium)-3",
)
_VISION = re.compile("|".join(VISION_FAMILIES), re.IGNORECASE)


def sees_images(model: str) -> bool:
    """Whether an OpenAI-compatible model of this name takes image parts."""
    return _VISION.search(model) is not None


def openai_messages(
    messages: Sequence[Message],
    wire: Callable[[int, Message], dict[str, Any]],
    vision: bool,
) -> list[dict[str, Any]]:
    """`messages` on the chat API's wire (`wire` encodes one), with each run of tool
    messages' images after it as a `user` message when `vision`."""
    out: list[dict[str, Any]] = []
    held: list[Message] = []
    for position, message in enumerate(messages):
        if held and message.role != "tool":
            out.append(_openai_images(held))
            held = []
        wired = wire(position, message)
        # A person's images (this turn's, or stored with an earlier message): for a
        # model that does not see them, the placeholder lines in the text stand in.
        if vision and message.role == "user" and message.images:
            wired = {"role": "user", "content": user_parts(message)}
        out.append(wired)
        if vision and message.role == "tool" and message.images:
            held.append(message)
    if held:
        out.append(_openai_images(held))
    return out


def user_parts(message: Message) -> list[dict[str, Any]]:
    """A user message that shows images, as chat API content parts: its text, then them."""
    parts: list[dict[str, Any]] = []
    if message.content:
        parts.append({"type": "text", "text": message.content})
    return parts + [_image_url(image) for image in message.images]


def _openai_images(messages: Sequence[Message]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for message in messages:
        parts.append({"type": "text", "text": f"The images {message.name} returned:"})
        parts += [_image_url(image) for image in message.images]
    return {"role": "user", "content": parts}


def _image_url(image: ImagePart) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"},
    }


def anthropic_content(message: Message) -> list[dict[str, Any]]:
    """A tool result's or a user message's `content` blocks: its text, then its images."""
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for image in message.images:
        source = {"type": "base64", "media_type": image.mime_type, "data": image.data}
        blocks.append({"type": "image", "source": source})
    return blocks


__all__ = ["anthropic_content", "openai_messages", "sees_images", "user_parts"]
