"""`seam run --image FILE` (and chat's `/image FILE`): a person's image files read and
checked before anything is stored or any model is called.

Each file must exist, be at most the cap (`contracts/images.py`; the size is checked
before a byte is read, so a 50 MiB file is refused, not loaded) and hold the bytes of a
PNG, JPEG, GIF or WebP image, whatever its name says. The turn's model must see images:
otherwise the run stops with `blind_message` before the submission is admitted.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from seam.apps.cli.exits import USAGE
from seam.apps.cli.runner import CliError
from seam.contracts.images import (
    MAX_IMAGES,
    ImageRefused,
    blind_message,
    check_size,
    image_from_bytes,
)
from seam.contracts.messages import ImagePart

if TYPE_CHECKING:
    from seam.contracts.sessions import SessionInfo
    from seam.wiring.runtime import Runtime


def read_images(paths: Sequence[str]) -> tuple[ImagePart, ...]:
    """The images of `paths`, in order, or a one-line usage error naming the file."""
    if len(paths) > MAX_IMAGES:
        raise CliError(f"--image: at most {MAX_IMAGES} images in one message", USAGE)
    return tuple(_read_one(path, held) for held, path in enumerate(paths))


def _read_one(path: str, held: int) -> ImagePart:
    shown = repr(path)
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            check_size(size)  # before a byte is read
            raw = file.read(size + 1)
        return image_from_bytes(raw, None, held)
    except FileNotFoundError:
        raise CliError(f"--image {shown}: no such file", USAGE) from None
    except IsADirectoryError:
        raise CliError(f"--image {shown}: is a directory, not an image file", USAGE) from None
    except OSError as exc:
        raise CliError(f"--image {shown}: cannot read it ({exc.strerror or exc})", USAGE) from None
    except ImageRefused as exc:
        raise CliError(f"--image {shown}: {exc}", USAGE) from None


def check_sees_images(
    runtime: Runtime, personality: str | None, stored: SessionInfo | None
) -> None:
    """A usage error (`blind_message`) when the turn's model does not take images."""
    from seam.wiring.vision import turn_model

    found = turn_model(runtime, personality, stored)
    model, sees = found if found is not None else ("this runtime's model", False)
    if not sees:
        raise CliError(blind_message(model), USAGE)


__all__ = ["check_sees_images", "read_images"]
