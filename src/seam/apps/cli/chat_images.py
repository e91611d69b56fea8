"""`/image FILE` in `seam chat`: an image that goes with the next message.

The file is read and checked at once (`apps/cli/images.py`: a missing file, one that is
not an image or one over the cap is one error line, and nothing is attached); the
images attached go with the next message the person types, and the turn's model must
take images (else one line, and the message is not sent).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from seam.apps.cli.exits import USAGE
from seam.apps.cli.images import read_images
from seam.apps.cli.runner import CliError
from seam.contracts.images import MAX_IMAGES
from seam.contracts.messages import ImagePart
from seam.contracts.turn_extras import TurnExtras


class PendingImages:
    """The images attached for the next message (`/image FILE`)."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say
        self._images: list[ImagePart] = []

    def handlers(self) -> dict[str, Callable[[str], Awaitable[None]]]:
        return {"/image": self._attach}

    async def _attach(self, arg: str) -> None:
        if not arg:
            raise CliError("/image takes the image file to send: /image photo.png", USAGE)
        if len(self._images) >= MAX_IMAGES:
            raise CliError(f"at most {MAX_IMAGES} images in one message", USAGE)
        [image] = read_images([arg])
        self._images.append(image)
        count = len(self._images)
        what = f"{image.mime_type}, {image.size:,} bytes"
        self._say(f"attached an image ({what}); {count} go with your next message")

    def take(self) -> TurnExtras | None:
        """The next message's images (None: none), no longer pending."""
        images, self._images = tuple(self._images), []
        return TurnExtras(images=images) if images else None


__all__ = ["PendingImages"]
