"""An image given to a model (a person's photo, an MCP tool's result, a caller's message)
as an `ImagePart`, or the reason it cannot be one: one set of limits for every source.

Each image is named by a placeholder line (type, size, SHA-256) that every model reads,
so a transcript, a log or a later turn can tell which image it was without keeping it.
The bytes must be what their type says (the first bytes of each format, its "magic
number"): a file named `.png` that holds a script is refused, not sent. A person's
images are stored once per content hash beside the session (`ImageBlobs`); the
transcript keeps the placeholder lines and the hashes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

from seam.contracts.messages import ImagePart, Message

# Anthropic refuses images over 5 MB; OpenAI's limit is higher. One cap for both.
MAX_IMAGE_BYTES = 5 * 1024 * 1024
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_IMAGES = 8  # per message or result
_MIB = MAX_IMAGE_BYTES // (1024 * 1024)
# Names a type goes by that mean one of IMAGE_TYPES.
_ALIASES = {"image/jpg": "image/jpeg", "image/pjpeg": "image/jpeg"}


class ImageRefused(ValueError):
    """Why an image cannot go to a model, in one line; `status` is the HTTP answer a web
    route gives it (413: too big, 415: not an image type, 400: anything else)."""

    def __init__(self, reason: str, status: int = 400) -> None:
        super().__init__(reason)
        self.status = status


def sniff(raw: bytes) -> str | None:
    """The image type the bytes' first bytes say (None: none of IMAGE_TYPES)."""
    if raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if raw.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if raw.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return None


def placeholder(mime: str, size: int, digest: str) -> str:
    """The line that stands for an image in text: what every model reads."""
    return f"[image {mime}, {size:,} bytes, sha256 {digest[:16]}]"


def check_size(size: int) -> None:
    """`ImageRefused` (413) for an image of `size` bytes over the cap."""
    if size > MAX_IMAGE_BYTES:
        raise ImageRefused(f"{size:,} bytes is over the {_MIB} MiB limit for an image", 413)


def image_from_bytes(raw: bytes, declared: str | None = None, held: int = 0) -> ImagePart:
    """A person's image from its bytes, or `ImageRefused`: over the cap, not an image
    type, bytes that are not the `declared` type, or one image too many (`held`: how
    many its message already carries)."""
    check_size(len(raw))
    found = sniff(raw)
    if found is None:
        raise ImageRefused("not a PNG, JPEG, GIF or WebP image", 415)
    wanted = _ALIASES.get((declared or found).lower(), (declared or found).lower())
    if wanted != found:
        raise ImageRefused(f"said to be {declared} but its bytes are {found}", 415)
    if held >= MAX_IMAGES:
        raise ImageRefused(f"more than {MAX_IMAGES} images in one message")
    digest = hashlib.sha256(raw).hexdigest()
    return ImagePart(found, base64.b64encode(raw).decode("ascii"), digest, len(raw))


def decode_image(mime: str, data: str, held: int) -> tuple[ImagePart | None, str]:
    """The image (None when it cannot be shown) and its placeholder line; `held`: how
    many images its message already carries."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None, f"[image {mime}: its data is not valid base64, not shown]"
    digest = hashlib.sha256(raw).hexdigest()
    head = placeholder(mime, len(raw), digest)[:-1]
    if mime not in IMAGE_TYPES:
        return None, head + ": not a type models take, not shown]"
    if len(raw) > MAX_IMAGE_BYTES:
        return None, head + f": over the {_MIB} MiB limit, not shown]"
    if held >= MAX_IMAGES:
        return None, head + f": more than {MAX_IMAGES} images, not shown]"
    if sniff(raw) != mime:
        return None, head + ": its bytes are not that type, not shown]"
    return ImagePart(mime, data, digest, len(raw)), head + "]"


def blind_message(model: str) -> str:
    """The one line a surface says when the turn's model cannot see the images it got."""
    return (
        f"{model} does not take images; configure a vision model (an Anthropic model, or"
        " an OpenAI-compatible one such as gpt-4o or a -vl model) to send images"
    )


def with_placeholders(text: str, images: Sequence[ImagePart]) -> str:
    """A message's text as stored: the person's words, then one line per image."""
    lines = [placeholder(i.mime_type, i.size, i.sha256) for i in images]
    return "\n".join([text, *lines] if text else lines)


def image_summary(image: ImagePart) -> dict[str, Any]:
    """An image named, not inlined: what an export or a page's transcript carries."""
    return {"sha256": image.sha256, "mime_type": image.mime_type, "size": image.size}


def as_stored(message: Message) -> Message:
    """The message as a store keeps it: a person's images stay (by hash), a tool
    result's go (its placeholder lines stay: they were for that turn's next step)."""
    if message.role == "user" or not message.images:
        return message
    return replace(message, images=())


@runtime_checkable
class ImageBlobs(Protocol):
    """Where a store keeps a person's images: once per SHA-256, however many messages
    and submissions show them, dropped when no session refers to them any more."""

    async def load_images(self, hashes: Sequence[str]) -> list[ImagePart]:
        """The stored images of these hashes, in their order (one not stored: left out)."""
        ...


__all__ = [
    "IMAGE_TYPES",
    "MAX_IMAGES",
    "MAX_IMAGE_BYTES",
    "ImageBlobs",
    "ImageRefused",
    "as_stored",
    "blind_message",
    "check_size",
    "decode_image",
    "image_from_bytes",
    "image_summary",
    "placeholder",
    "sniff",
    "with_placeholders",
]
