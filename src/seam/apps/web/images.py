"""A person's images on the native API: the turn route's `images` (base64 with a declared
type, checked here before anything is admitted) and the route that serves a stored image
back to the page that shows the conversation.

Refusals are one line naming the image: 413 for one over the cap, 415 for bytes that are
not a PNG, JPEG, GIF or WebP image (or not the type declared), 400 for data that is not
base64 or a model that does not see images (`blind_message`). The turn route's body may
be larger than `[web] max_body_bytes` (`IMAGE_BODY_BYTES`), so that eight images at the
cap fit; every other route keeps the configured cap.
"""

# No `from __future__ import annotations`: FastAPI reads the image route's annotations,
# and `Who` is local to `add_image_routes`.
import base64
import binascii
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel, ConfigDict, Field

from seam.apps.web.auth import Principal
from seam.apps.web.errors import ApiError
from seam.contracts.images import (
    MAX_IMAGE_BYTES,
    MAX_IMAGES,
    ImageRefused,
    blind_message,
    image_from_bytes,
)
from seam.contracts.messages import ImagePart

if TYPE_CHECKING:
    from seam.apps.web.backend import WebBackend

# POST /api/sessions/{name}/messages: the one route whose body may carry images.
IMAGE_ROUTE = re.compile(r"/api/sessions/[^/]+/messages")
# Eight images at the cap, in base64, and the text beside them.
IMAGE_BODY_BYTES = MAX_IMAGES * (MAX_IMAGE_BYTES * 4 // 3 + 4) + 1024 * 1024
_HASH = re.compile(r"[0-9a-f]{64}")


class ImageIn(BaseModel):
    """One image of a new message: its declared type and its bytes in base64."""

    model_config = ConfigDict(extra="forbid")
    mime_type: str = Field(min_length=1, max_length=100)
    data: str = Field(min_length=1)


def body_limit(scope: dict[str, Any], configured: int) -> int:
    """The body cap of a request: the turn route's is wide enough for its images."""
    if scope.get("method") == "POST" and IMAGE_ROUTE.fullmatch(scope.get("path", "")):
        return max(configured, IMAGE_BODY_BYTES)
    return configured


def decode_images(items: list[ImageIn]) -> tuple[ImagePart, ...]:
    """The message's images, or the ApiError that refuses the first bad one."""
    shown: list[ImagePart] = []
    for at, item in enumerate(items):
        where = f"images[{at}]"
        try:
            raw = base64.b64decode(item.data, validate=True)
        except (binascii.Error, ValueError):
            raise ApiError(400, f"{where}: its data is not valid base64") from None
        try:
            shown.append(image_from_bytes(raw, item.mime_type, at))
        except ImageRefused as exc:
            raise ApiError(exc.status, f"{where}: {exc}") from None
    return tuple(shown)


async def check_vision(backend: "WebBackend", key: str, personality: str | None) -> None:
    """A 400 (`blind_message`) when the turn's model does not take images."""
    runtime = backend.runtime
    if personality is None:
        stored = await runtime.sessions.get(key)
        personality = stored.personality if stored is not None else None
    pid = personality or runtime.personalities.default_id
    if backend.sees_images(pid):
        return
    model = f"the model of personality {pid!r}"
    if runtime.settings is not None:
        from seam.wiring.vision import vision_models

        model = vision_models(runtime.settings, runtime.personalities)(pid)[0]
    raise ApiError(400, f"images: {blind_message(model)}")


def add_image_routes(
    api: APIRouter, backend: "WebBackend", principal: Callable[..., Awaitable[Principal]]
) -> None:
    """GET /api/sessions/{name}/images/{sha256}: an image the session's transcript
    shows, with its own type (nosniff comes with every response)."""
    Who = Annotated[Principal, Depends(principal)]

    @api.get("/sessions/{name}/images/{sha256}", response_class=Response)
    async def session_image(who: Who, name: str, sha256: str) -> Response:
        if not _HASH.fullmatch(sha256):
            raise ApiError(404, "no such image in this session")
        key = await backend.existing_key(who.tenant, name)
        for message in await backend.runtime.store.messages(key):
            for image in message.images:
                if image.sha256 == sha256:
                    headers = {"Cache-Control": "private, max-age=86400"}
                    raw = base64.b64decode(image.data)
                    return Response(raw, media_type=image.mime_type, headers=headers)
        raise ApiError(404, "no such image in this session")


__all__ = [
    "IMAGE_BODY_BYTES",
    "ImageIn",
    "add_image_routes",
    "body_limit",
    "check_vision",
    "decode_images",
]
