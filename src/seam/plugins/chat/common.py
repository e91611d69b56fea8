"""What the chat adapters share, so each adapter file says only what its platform does
differently: reading a `[gateway.<name>]` section that may be a mapping or a settings
object, waiting that a `close` cuts short, reconnecting with capped back-off forever, and
the bounded in-memory books (delivered ids, long button data) every adapter keeps."""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from seam.contracts.chat import AttachmentKind

_K = TypeVar("_K")
_V = TypeVar("_V")
_KINDS: dict[str, AttachmentKind] = {"image": "image", "video": "video", "audio": "audio"}


def setting(section: object, key: str, default: Any) -> Any:
    """`key` of a platform's section: wiring hands in its settings model, a test a dict."""
    if isinstance(section, Mapping):
        return section.get(key, default)
    return getattr(section, key, default)


async def wait_closed(closed: asyncio.Event, seconds: float) -> None:
    """Sleep `seconds`, or less if the adapter is closed meanwhile."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(closed.wait(), max(seconds, 0.0))


async def reconnect_forever(
    closed: asyncio.Event, backoff: tuple[float, float], connect: Callable[[], Awaitable[bool]]
) -> None:
    """Run `connect` (one connection's whole life, its errors already recorded; True if it
    got up) again and again until `closed`, waiting `low * 2**n` seconds (at most `high`)
    between tries; a connection that got up starts the back-off over. An adapter never
    gives up: one that stops for good is the silent death the watchdog exists to catch."""
    attempt = 0
    while not closed.is_set():
        if await connect():
            attempt = 0
        if closed.is_set():
            break
        low, high = backoff
        await wait_closed(closed, min(high, low * 2**attempt))
        attempt += 1


def remember(book: OrderedDict[_K, _V], key: _K, value: _V, keep: int) -> None:
    """Put `key` in `book` as its newest entry and forget the oldest beyond `keep`."""
    book[key] = value
    book.move_to_end(key)
    while len(book) > keep:
        book.popitem(last=False)


def kind_of(mime: str | None, *, unknown: AttachmentKind) -> AttachmentKind:
    """An attachment's kind by its MIME type's major part (`unknown` without a type)."""
    if not mime:
        return unknown
    return _KINDS.get(mime.split("/", 1)[0], "document")
