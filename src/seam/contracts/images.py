"""An image given to a model (an MCP tool's result, a caller's message) as an
`ImagePart`, or the reason it cannot be one: one set of limits for every source.

Each image is named by a placeholder line (type, size, SHA-256) that every model reads,
so a transcript, a log or a later turn can tell which image it was without keeping it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib

from seam.contracts.messages import ImagePart

# Anthropic refuses images over 5 MB; OpenAI's limit is higher. One cap for both.
MAX_IMAGE_BYTES = 5 * 1024 * 1024
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_IMAGES = 8  # per message or result


def decode_image(mime: str, data: str, held: int) -> tuple[ImagePart | None, str]:
    """The image (None when it cannot be shown) and its placeholder line; `held`: how
    many images its message already carries."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None, f"[image {mime}: its data is not valid base64, not shown]"
    digest = hashlib.sha256(raw).hexdigest()
    head = f"[image {mime}, {len(raw):,} bytes, sha256 {digest[:16]}"
    if mime not in IMAGE_TYPES:
        return None, head + ": not a type models take, not shown]"
    if len(raw) > MAX_IMAGE_BYTES:
        return None, head + f": over the {MAX_IMAGE_BYTES // (1024 * 1024)} MiB limit, not shown]"
    if held >= MAX_IMAGES:
        return None, head + f": more than {MAX_IMAGES} images, not shown]"
    return ImagePart(mime, data, digest, len(raw)), head + "]"


__all__ = ["IMAGE_TYPES", "MAX_IMAGES", "MAX_IMAGE_BYTES", "decode_image"]
