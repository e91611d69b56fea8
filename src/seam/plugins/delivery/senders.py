"""Senders: what the `OutboxDeliverer` hands an outbox item to, one per kind of target.

A sender names the target prefix it delivers (`prefix`), and `send(item)` delivers one
item, returning the platform's id of the message (or None when there is none), or raises
`DeliveryFailed` saying whether trying again could help. The deliverer does the rest
(claims, back-off, recording the outcome), so a sender is one call to one platform.

Delivery is at least once: a deliverer killed after the platform took a message but
before the outbox recorded it sends it again once its lease runs out. Each sender makes
that second copy harmless where it can: `FileSender` finds the item's marker already in
the file and does not append it twice; `WebhookSender` sends the item's key as the
`Idempotency-Key` header, so the receiver can drop the repeat. The gateway's chat senders
(`telegram:`, `slack:`, `discord:`) implement the same protocol.

Payloads are the JSON text the producer enqueued; these senders read its `text` (and
`source`, falling back to the item's): `{"text": "...", "source": "..."}`.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import time
from collections.abc import Collection
from datetime import datetime
from pathlib import Path
from typing import Protocol, runtime_checkable

import httpx

from seam.contracts.addresses import (
    ALLOW_PRIVATE_ADVICE,
    Resolver,
    Unreachable,
    allow_entry,
    url_addresses,
)
from seam.contracts.outbox import OutboxItem
from seam.plugins.resolver import system_resolve


class DeliveryFailed(Exception):
    """One attempt failed. `permanent`: trying again cannot help (a 404, a path outside the
    deliveries folder), so the item is failed for good; otherwise it is retried with
    back-off, or after `retry_after` seconds when the platform said so (Retry-After)."""

    def __init__(
        self, message: str, *, permanent: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.permanent = permanent
        self.retry_after = retry_after


@runtime_checkable
class Sender(Protocol):
    prefix: str  # the targets it delivers: "file:", "http", "telegram:", ...

    async def send(self, item: OutboxItem) -> str | None:
        """Deliver `item`; the platform's id of the message (None: it has none), or
        `DeliveryFailed`."""
        ...


def payload_text(item: OutboxItem) -> tuple[str, str | None]:
    """The text to deliver and its source, from a `{"text": ..., "source": ...}` payload
    (a payload without text can never be delivered: a permanent failure)."""
    try:
        data = json.loads(item.payload)
    except ValueError:
        raise DeliveryFailed("the payload is not JSON", permanent=True) from None
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise DeliveryFailed('the payload has no "text" to deliver', permanent=True)
    source = data.get("source")
    return data["text"], source if isinstance(source, str) else item.source


# Files


class FileSender:
    """`file:<path>`: appends one Markdown block per delivery to a file under `root`
    (`$SEAM_HOME/deliveries/`, injected). Relative paths are taken from `root`; absolute
    ones must lie inside it, symlinks resolved, or the item fails for good.

    Each block is one `O_APPEND` write, fsynced before `send` returns, so a reader never
    sees half a block and a crash never loses a recorded delivery. The block ends with an
    HTML comment holding the item's key: a second delivery of the same item (after a
    crash between the write and `mark_sent`) finds it and appends nothing.
    """

    prefix = "file:"

    def __init__(self, root: Path) -> None:
        self.root = root

    async def send(self, item: OutboxItem) -> str | None:
        path = self.path_of(item.target)
        text, source = payload_text(item)
        block = render_block(item, text, source)
        # Only a repeat attempt can find its block written already (keys are unique), so
        # a first one does not read the file.
        mark = marker(item.key) if item.attempts != 1 else None
        await asyncio.to_thread(_append_once, path, block, mark)
        return str(path)

    def path_of(self, target: str) -> Path:
        raw = target[len(self.prefix) :] if target.startswith(self.prefix) else target
        if not raw.strip() or "\x00" in raw:
            raise DeliveryFailed(f"{target!r} names no file", permanent=True)
        path = Path(raw).expanduser()
        if ".." in path.parts:
            raise DeliveryFailed(f"{target!r}: '..' may not appear in the path", permanent=True)
        root = Path(os.path.realpath(self.root))
        full = Path(os.path.realpath(path if path.is_absolute() else root / path))
        if root not in full.parents:
            raise DeliveryFailed(
                f"{target!r} is outside {self.root}/, where files are delivered", permanent=True
            )
        return full


def marker(key: str) -> str:
    # `--` cannot appear inside an HTML comment; keys are the producer's, so escape it.
    return f"<!-- seam-delivery: {key.replace('--', '- -')} -->"


def render_block(item: OutboxItem, text: str, source: str | None) -> str:
    when = datetime.fromtimestamp(item.created_at).astimezone().isoformat(timespec="seconds")
    header = f"## {when}" + (f" · {source}" if source else "")
    return f"{header}\n\n{text.rstrip()}\n\n{marker(item.key)}\n\n"


def _append_once(path: Path, block: str, mark: str | None) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if mark is not None and mark in path.read_text(encoding="utf-8", errors="replace"):
                return  # delivered before a crash kept it from being recorded
        except FileNotFoundError:
            pass
        data = block.encode()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            written = os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise DeliveryFailed(f"cannot write {path}: {exc.strerror or exc}") from None
    if written != len(data):  # a full disk: say so rather than call it delivered
        raise DeliveryFailed(f"only {written} of {len(data)} bytes reached {path}")


# Webhooks


class WebhookSender:
    """`https://...` / `http://...`: POSTs `{"key", "source", "text", "created_at"}` as
    JSON with the item's key as `Idempotency-Key`. A 2xx is a delivery; 408, 429 and 5xx
    (and network errors) are retried, after `Retry-After` when the receiver sent one; any
    other status fails for good (the receiver refused this payload, retrying cannot help;
    redirects are not followed).

    A job's target is text a model may have written, so a URL whose host is loopback,
    link-local (cloud metadata), private, CGNAT or otherwise not public fails for good
    unless the host, address or network is on `allow` (`[network] allow_private`). The
    POST goes to the checked address (Host header and TLS name kept), so a DNS answer that
    changes after the check (rebinding) cannot move it."""

    prefix = "http"

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        timeout: float = 30.0,
        allow: Collection[str] = (),
        resolve: Resolver = system_resolve,
    ) -> None:
        self._client = client
        self._own_client = client is None
        self.timeout = timeout
        self._allow = frozenset(allow_entry(entry) for entry in allow)
        self._resolve = resolve

    async def send(self, item: OutboxItem) -> str | None:
        url = item.target
        if not url.startswith(("https://", "http://")):
            raise DeliveryFailed(f"{url!r} is not an http(s) URL", permanent=True)
        text, source = payload_text(item)
        body = {"key": item.key, "source": source, "text": text, "created_at": item.created_at}
        headers = {"Idempotency-Key": item.key, "User-Agent": "seam-delivery"}
        try:
            pinned, extensions = await self._pinned(httpx.URL(url), headers)
            response = await self.client().post(
                pinned, json=body, headers=headers, timeout=self.timeout, extensions=extensions
            )
        except httpx.InvalidURL as exc:
            raise DeliveryFailed(f"{url!r} is not a valid URL: {exc}", permanent=True) from None
        except httpx.HTTPError as exc:
            raise DeliveryFailed(f"POST {url}: {type(exc).__name__}: {exc}") from None
        status = response.status_code
        if 200 <= status < 300:
            request_id: str | None = response.headers.get("X-Request-Id")
            return request_id
        reason = f"POST {url}: HTTP {status} {response.reason_phrase}".rstrip()
        if status in (408, 429) or status >= 500:
            raise DeliveryFailed(
                reason, retry_after=retry_after(response.headers.get("Retry-After"))
            )
        raise DeliveryFailed(reason, permanent=True)

    async def _pinned(
        self, url: httpx.URL, headers: dict[str, str]
    ) -> tuple[httpx.URL, dict[str, str]]:
        """`url` with its host replaced by a checked address; fills in the Host header and
        gives the TLS server name to check the certificate against."""
        host = url.host
        if not host:
            raise DeliveryFailed(f"{url} names no host", permanent=True)
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            addresses = await url_addresses(
                str(url), host, port, self._allow, self._resolve, ALLOW_PRIVATE_ADVICE
            )
        except Unreachable as exc:  # a name that does not resolve may later: retried
            message = str(exc) if exc.refused else f"POST {url}: {exc}"
            raise DeliveryFailed(message, permanent=exc.refused) from None
        if not addresses:
            raise DeliveryFailed(f"POST {url}: {host} resolves to no address")
        headers["Host"] = url.netloc.decode("ascii")
        extensions = {"sni_hostname": host} if url.scheme == "https" else {}
        return url.copy_with(host=addresses[0]), extensions

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(follow_redirects=False)
        return self._client

    async def aclose(self) -> None:
        if self._own_client and self._client is not None:
            await self._client.aclose()
            self._client = None


def retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
