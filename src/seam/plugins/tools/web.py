"""The `web_fetch` tool: GET one URL and return its text, behind an SSRF guard.

A model that can fetch URLs can be talked (by a page it read) into fetching internal
ones: a cloud metadata endpoint, a router, a service on localhost. So every hop is
checked before anything is sent: the scheme, the host name, and every address the name
resolves to. The request then goes to the address that was checked (the URL's host is
replaced by it, with the original Host header and TLS server name), so a DNS answer that
changes between the check and the connection (DNS rebinding) cannot redirect it.

Only the standard library's `html.parser` is used for text extraction: pages are read
for their words, and a tolerant parser that needs no dependency is enough for that.

Not covered: a decompression bomb inflates at most one network chunk (about 64 KB of
compressed data) before the size limit stops reading; and a client handed in through
`client_factory` that sends through a proxy connects wherever that proxy does.
"""

from __future__ import annotations

import asyncio
import codecs
import re
import ssl
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from seam.contracts.addresses import (
    Resolver,
    Unreachable,
    address_refusal,
    allow_entry,
    url_addresses,
)
from seam.contracts.tool_spec import SpecTool, ToolSpec, positive_integer
from seam.contracts.tools import ToolContext, ToolError
from seam.plugins.resolver import system_resolve

__all__ = ["WebFetch", "address_refusal", "html_to_text", "system_resolve"]

ClientFactory = Callable[[], httpx.AsyncClient]

MAX_BYTES = 2_000_000  # read from the network per fetch, at most
TIMEOUT = 20.0  # seconds for the whole fetch, redirects included
MAX_CHARS = 50_000  # returned to the model unless it asks for more
MAX_REDIRECTS = 5
ERROR_TEXT_CHARS = 500  # of an error page's text shown with the status
SNIFF_BYTES = 4096
USER_AGENT = "seam-web-fetch/1"
_PRIVATE_ADVICE = "private and local addresses cannot be fetched"

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_BINARY_TYPES = ("image/", "audio/", "video/", "font/", "model/")
_TEXT_SUFFIXES = ("/json", "+json", "/xml", "+xml", "/javascript", "/ecmascript", "/yaml")
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_-]+)", re.IGNORECASE)


class WebFetch(SpecTool):
    spec = ToolSpec(
        name="web_fetch",
        description=(
            "Fetch a web page or file over HTTP(S) and return its text (HTML is reduced to "
            "readable text). Private and local addresses are refused."
        ),
        arguments={
            "url": {"type": "string", "minLength": 1, "description": "http:// or https:// URL."},
            "max_chars": positive_integer(f"Text returned (default {MAX_CHARS})."),
        },
        required=("url",),
        concurrent=True,
        idempotent=True,
    )

    def __init__(
        self,
        client_factory: ClientFactory | None = None,
        allow_private: bool = False,
        allowed_hosts: Collection[str] = (),
        *,
        resolver: Resolver = system_resolve,
        timeout: float = TIMEOUT,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        """`allowed_hosts` entries are "host" or "host:port"; they skip the address check
        (the scheme check always applies). `client_factory` is called once per fetch and
        the client is closed after it; its proxy settings are its own business."""
        self._client_factory = client_factory or self._default_client
        self._allow_private = allow_private
        self._allowed = frozenset(allow_entry(entry) for entry in allowed_hosts)
        self._resolve = resolver
        self._timeout = timeout
        self._max_bytes = max_bytes
        self._ssl: ssl.SSLContext | None = None

    def _default_client(self) -> httpx.AsyncClient:
        if self._ssl is None:
            # Loading the CA bundle costs milliseconds: do it once per tool, not per fetch.
            self._ssl = ssl.create_default_context()
        # trust_env=False: no proxy or .netrc picked up from the environment.
        return httpx.AsyncClient(
            verify=self._ssl,
            trust_env=False,
            timeout=self._timeout,
            headers={"User-Agent": USER_AGENT},
        )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        # The schema is checked before `run`: url is a string, max_chars at least 1.
        raw_url = str(args["url"]).strip()
        max_chars = int(args.get("max_chars", MAX_CHARS))
        url = _parse(raw_url)
        try:
            async with asyncio.timeout(self._timeout):
                page = await self._fetch(url)
        except TimeoutError:
            raise ToolError(
                f"fetching {raw_url} took longer than {self._timeout:g} s; gave up"
            ) from None
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # InvalidURL: a bad redirect
            raise ToolError(f"could not fetch {raw_url}: {type(exc).__name__}: {exc}") from None
        return page.render(max_chars)

    async def _fetch(self, url: httpx.URL) -> _Page:
        """Redirects are followed here, not by httpx, so every hop passes the guard."""
        redirects = 0
        async with self._client_factory() as client:
            while True:
                response = await self._send(client, url)
                try:
                    location = response.headers.get("location")
                    if response.status_code not in _REDIRECTS or not location:
                        return await self._read(response, url)
                finally:
                    await response.aclose()
                redirects += 1
                if redirects > MAX_REDIRECTS:
                    raise ToolError(f"more than {MAX_REDIRECTS} redirects; stopped at {url}")
                url = _parse(str(url.join(location)))

    async def _send(self, client: httpx.AsyncClient, url: httpx.URL) -> httpx.Response:
        """Check the hop, then connect to a checked address (trying each in turn)."""
        host = url.raw_host.decode("ascii").rstrip(".").lower()
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            if self._allow_private:
                addresses = await self._resolve(host, port)
            else:
                addresses = await url_addresses(
                    str(url), host, port, self._allowed, self._resolve, _PRIVATE_ADVICE
                )
        except Unreachable as exc:
            raise ToolError(str(exc)) from None
        except OSError as exc:  # with allow_private, the name alone is resolved
            raise ToolError(f"could not resolve {host}: {exc}") from None
        if not addresses:
            raise ToolError(f"could not resolve {host}: no addresses")
        headers = {"Host": url.netloc.decode("ascii")}
        extensions = {"sni_hostname": host} if url.scheme == "https" else {}

        async def send(address: str) -> httpx.Response:
            pinned = url.copy_with(host=address)
            request = client.build_request("GET", pinned, headers=headers, extensions=extensions)
            return await client.send(request, stream=True, follow_redirects=False)

        for address in addresses[:-1]:
            try:
                return await send(address)
            except httpx.ConnectError:
                continue
        return await send(addresses[-1])

    async def _read(self, response: httpx.Response, url: httpx.URL) -> _Page:
        mime = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if mime.startswith(_BINARY_TYPES):
            raise ToolError(f"{url} is binary content ({mime}); web_fetch returns text only")
        chunks: list[bytes] = []
        size = 0
        cut = False
        sniffed = _is_text_type(mime)
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if not sniffed and size >= SNIFF_BYTES:
                _refuse_binary(b"".join(chunks), mime, url)
                sniffed = True
            if size > self._max_bytes:
                cut = True
                break
        body = b"".join(chunks)[: self._max_bytes]
        if not sniffed:
            _refuse_binary(body, mime, url)
        html = mime in _HTML_TYPES or (not mime and _looks_html(body))
        text = _decode(body, response.charset_encoding, html)
        if html:
            text = html_to_text(text, str(url))
        if not response.is_success:
            shown = text.strip()[:ERROR_TEXT_CHARS]
            raise ToolError(
                f"HTTP {response.status_code} {response.reason_phrase} from {url}"
                + (f"\n{shown}" if shown else "")
            )
        return _Page(str(url), mime or "unknown type", text, self._max_bytes if cut else 0)


@dataclass(frozen=True, slots=True)
class _Page:
    url: str
    mime: str
    text: str
    cut_at: int  # bytes read before the size limit stopped reading; 0 when read whole

    def render(self, max_chars: int) -> str:
        text = self.text
        notes = []
        if self.cut_at:
            notes.append(f"[stopped reading at {self.cut_at:,} bytes]")
        if len(text) > max_chars:
            notes.append(
                f"[cut at {max_chars:,} of {len(text):,} chars; pass a larger max_chars for more]"
            )
            text = text[:max_chars]
        head = f"{self.url} ({self.mime}, {len(self.text):,} chars)"
        return "\n".join([head, text, *notes])


def _parse(raw: str) -> httpx.URL:
    try:
        url = httpx.URL(raw)
    except (httpx.InvalidURL, UnicodeError) as exc:
        raise ToolError(f"invalid URL {raw!r}: {exc}") from None
    if url.scheme not in ("http", "https"):
        scheme = url.scheme or "no scheme"
        raise ToolError(
            f"refused {raw!r}: only http:// and https:// URLs can be fetched ({scheme})"
        )
    if not url.raw_host:
        raise ToolError(f"invalid URL {raw!r}: no host")
    return url


def _looks_html(body: bytes) -> bool:
    return body[:256].lstrip()[:14].lower().startswith((b"<!doctype html", b"<html"))


def _is_text_type(mime: str) -> bool:
    return mime.startswith("text/") or mime.endswith(_TEXT_SUFFIXES)


def _refuse_binary(head: bytes, mime: str, url: httpx.URL) -> None:
    sample = head[:SNIFF_BYTES]
    if b"\x00" in sample:
        raise ToolError(f"{url} is binary content ({mime or 'no content type'}); text only")
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(sample) - 3:  # not just a character cut at the sample's end
            raise ToolError(
                f"{url} is not text ({mime or 'no content type'}); web_fetch returns text only"
            ) from None


def _decode(body: bytes, charset: str | None, html: bool) -> str:
    if charset is None and html:
        match = _META_CHARSET.search(body[:2048])
        charset = match.group(1).decode("ascii") if match else None
    try:
        codecs.lookup(charset or "utf-8")
    except LookupError:
        charset = None
    return body.decode(charset or "utf-8", errors="replace")


# --- HTML to text -------------------------------------------------------------------------


def html_to_text(html: str, base_url: str = "") -> str:
    """Readable text of a page (see `web_text`, imported on the first page: a session
    that fetches none never loads the HTML parser)."""
    from seam.plugins.tools.web_text import html_to_text as extract

    return extract(html, base_url)
