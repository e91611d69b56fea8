"""A person's images in the SQL stores (SQLite and PostgreSQL): the columns that refer to
them and the rows that hold them, to and from `ImagePart`.

An image is stored once, in `image_blobs`, keyed by its SHA-256 (the same photo sent
twice, or in two sessions, is one row). A transcript message and a submission refer to
theirs by a JSON list of hashes in their `images` column, so a session's rows stay the
size of its text. A message read back carries a stand-in per hash (no bytes) until
`hydrate` swaps in the stored image: the stores do that in the same read.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from seam.contracts.images import as_stored
from seam.contracts.messages import ImagePart, Message

BLOB_COLUMNS = "sha256, mime_type, size, data, created_at"


def hashes_column(images: Sequence[ImagePart]) -> str | None:
    """The `images` column of a row that shows `images` (None: it shows none)."""
    return json.dumps([image.sha256 for image in images]) if images else None


def message_images(message: Message) -> str | None:
    """A transcript row's `images` column: a person's images only (`as_stored`)."""
    return hashes_column(as_stored(message).images)


def hashes_of(column: str | None) -> tuple[str, ...]:
    return () if column is None else tuple(json.loads(column))


def stand_ins(column: str | None) -> tuple[ImagePart, ...]:
    """The images of a stored row before `hydrate`: their hashes only."""
    return tuple(ImagePart("", "", digest, 0) for digest in hashes_of(column))


def wanted(messages: Iterable[Message]) -> list[str]:
    """The hashes the messages' stand-ins name, each once."""
    return list(dict.fromkeys(i.sha256 for m in messages for i in m.images))


def hydrate(messages: list[Message], found: Mapping[str, ImagePart]) -> list[Message]:
    """The messages with each stand-in replaced by its stored image."""
    if not found:
        return messages
    out = []
    for message in messages:
        if message.images:
            shown = tuple(found[i.sha256] for i in message.images if i.sha256 in found)
            message = replace(message, images=shown)
        out.append(message)
    return out


def blob_params(images: Iterable[ImagePart], now: float) -> list[tuple[Any, ...]]:
    """`BLOB_COLUMNS` rows for the images (each hash once)."""
    unique = {image.sha256: image for image in images}
    return [(i.sha256, i.mime_type, i.size, base64.b64decode(i.data), now) for i in unique.values()]


def image_from_blob(row: Sequence[Any]) -> ImagePart:
    """An `image_blobs` row (sha256, mime_type, size, data) as the image it holds."""
    digest, mime, size, data = row
    return ImagePart(mime, base64.b64encode(bytes(data)).decode("ascii"), digest, size)


def shown_images(messages: Iterable[Message]) -> list[ImagePart]:
    """The images a batch of transcript messages stores (a person's, not a tool's)."""
    return [image for m in messages for image in as_stored(m).images]


__all__ = [
    "BLOB_COLUMNS",
    "blob_params",
    "hashes_column",
    "hashes_of",
    "hydrate",
    "image_from_blob",
    "message_images",
    "shown_images",
    "stand_ins",
    "wanted",
]
