"""What an MCP result becomes for the model: text, and images for a model that sees them.

Text parts stay as they are; structured content is added as JSON unless a text part
already says it; an embedded text resource is shown with its URI; audio, binary
resources and links are a one-line note. An image (a tool's `image` part, or an
embedded resource whose type is an image) becomes a placeholder line naming its type,
size and SHA-256, which every model reads, and an `ImagePart` that the loop attaches to
the tool message for a provider whose model can see images. An image over
`MAX_IMAGE_BYTES`, of a type model APIs do not take, or whose base64 does not decode
stays a note. The loop's hooks (the injection guard among them) see the text like any
tool output.
"""

from __future__ import annotations

import json
from typing import Any

from seam.contracts.images import IMAGE_TYPES, MAX_IMAGE_BYTES, decode_image
from seam.contracts.messages import ImagePart
from seam.contracts.tools import ToolOutput


def render(result: Any) -> ToolOutput:
    """A `CallToolResult` (or a prompt's / resource's contents) as text with images."""
    parts: list[str] = []
    images: list[ImagePart] = []
    for item in getattr(result, "content", None) or ():
        parts.append(part(item, images))
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        dumped = json.dumps(structured, ensure_ascii=False, sort_keys=True, default=str)
        if not any(_same_json(part, structured) for part in parts):
            parts.append(dumped)
    return ToolOutput("\n".join(parts), tuple(images))


def part(item: Any, images: list[ImagePart]) -> str:
    """One content item as text; an image that a model may see joins `images`."""
    kind = getattr(item, "type", "")
    if kind == "text":
        return str(item.text)
    if kind == "image":
        return image(item.mime_type, item.data, images)
    if kind == "audio":
        size = len(item.data) * 3 // 4
        return f"[audio {item.mime_type}, about {size:,} bytes, not shown]"
    if kind == "resource_link":
        return f"[resource link: {item.uri}" + (f" ({item.name})]" if item.name else "]")
    if kind == "resource":
        return resource(item.resource, images)
    return f"[{kind or 'unknown'} content, not shown]"


def resource(inner: Any, images: list[ImagePart]) -> str:
    """One `TextResourceContents` / `BlobResourceContents`, headed by its URI."""
    text = getattr(inner, "text", None)
    if text is not None:
        return f"[resource {inner.uri}]\n{text}"
    mime = getattr(inner, "mime_type", None) or "binary"
    if mime in IMAGE_TYPES:
        return f"[resource {inner.uri}]\n" + image(mime, inner.blob, images)
    return f"[resource {inner.uri} ({mime}), not shown]"


def image(mime: str, data: str, images: list[ImagePart]) -> str:
    """The placeholder for one image; the image joins `images` when a model may see it."""
    shown, line = decode_image(mime, data, len(images))
    if shown is not None:
        images.append(shown)
    return line


def _same_json(text: str, value: Any) -> bool:
    """Whether a text part already says what the structured content says."""
    if isinstance(value, dict) and set(value) == {"result"}:
        value = value["result"]  # the SDK's wrapped return value: {"result": 3} beside "3"
        if isinstance(value, str):
            return text == value
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


__all__ = ["MAX_IMAGE_BYTES", "image", "part", "render", "resource"]
