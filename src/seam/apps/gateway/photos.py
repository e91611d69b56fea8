"""Photos people send in a chat: images for a model that sees them.

A photo (Telegram's largest size of it, `plugins/chat/telegram/parse.py`) or a document
of an image type is downloaded, checked (the cap, its bytes a PNG, JPEG, GIF or WebP
image: `contracts/images.py`) and goes with the turn (stored with its submission, so a
retry or another worker still shows it); the caption is the person's text, as any
message's. For a model that does not see images the message is answered with one line
(`blind_message`) and not submitted: nothing is stored half-way. A runtime whose models
are not named (assembled by hand) keeps the old answer: images cannot be used here.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from seam.contracts.chat import Attachment
from seam.contracts.images import (
    MAX_IMAGES,
    ImageRefused,
    blind_message,
    check_size,
    image_from_bytes,
)
from seam.contracts.messages import ImagePart
from seam.wiring.runtime import Runtime
from seam.wiring.vision import turn_model

log = logging.getLogger("seam.gateway")


@dataclass
class Photos:
    images: list[ImagePart] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # one sentence per refused photo
    others: tuple[Attachment, ...] = ()  # what `attachments.receive` handles
    # The model does not see images: the message is answered (`refused`), not submitted.
    stop: bool = False


def is_photo(item: Attachment) -> bool:
    mime = (item.mime_type or "").lower()
    return item.kind == "image" or (item.kind == "document" and mime.startswith("image/"))


def blind(model: str) -> str:
    """The answer to a photo for a model that does not see images."""
    return blind_message(model) + "."


async def photos_for(runtime: Runtime, key: str, attachments: Sequence[Attachment]) -> Photos:
    """What the message's photos become in session `key`: images, or the refusal."""
    if not any(map(is_photo, attachments)):
        return Photos(others=tuple(attachments))
    found = turn_model(runtime, None, await runtime.store.get(key))
    if found is None:  # models not named: as before, `receive` says it cannot use them
        return Photos(others=tuple(attachments))
    model, sees = found
    if not sees:
        return Photos(refused=[blind(model)], stop=True)
    return await take_photos(attachments)


async def take_photos(attachments: Sequence[Attachment]) -> Photos:
    """The photos among `attachments` as images (each checked), the rest left over."""
    out = Photos(others=tuple(a for a in attachments if not is_photo(a)))
    for item in (a for a in attachments if is_photo(a)):
        if len(out.images) >= MAX_IMAGES:
            out.refused.append(f"I take at most {MAX_IMAGES} images in one message.")
            break
        try:
            out.images.append(await _fetch(item, len(out.images)))
        except ImageRefused as exc:
            out.refused.append(f"I can't use {item.name}: {exc}.")
        except Exception as exc:
            log.warning("downloading %s failed: %s", item.name, exc)
            out.refused.append(f"I could not download {item.name}; please send it again.")
    return out


async def _fetch(item: Attachment, held: int) -> ImagePart:
    if item.fetch is None:
        raise ImageRefused("it could not be downloaded again; please send it again")
    if item.size is not None:
        check_size(item.size)  # before a byte is downloaded
    raw = await item.fetch()
    return image_from_bytes(raw, None, held)


__all__ = ["Photos", "blind", "is_photo", "photos_for", "take_photos"]
