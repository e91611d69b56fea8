"""A run-time MCP server over HTTP is reached at the address that passed the check.

`contracts.addresses.checked_addresses` resolves the server's name and refuses a
non-public answer; if the HTTP client then resolved the name again, a DNS answer that
changed in between (rebinding) could send the session to loopback or cloud metadata after
all. `PinnedTransport` connects every request for that host to the checked address
instead, keeping the name where the server sees it: the URL (so the SDK's session and
redirect logic are unchanged), the `Host` header, and the TLS server name the certificate
is checked against (`sni_hostname`), as the webhook sender does.
"""

from __future__ import annotations

from typing import Any

import httpx2


class PinnedTransport(httpx2.AsyncBaseTransport):
    """Requests for `host` go to `address`; `options` are the default transport's.
    (Imported only when an HTTP server is opened, as httpx2 itself is.)"""

    def __init__(self, host: str, address: str, **options: Any) -> None:
        self.host = host
        self.address = address
        self.inner = httpx2.AsyncHTTPTransport(**options)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.host == self.host:
            # The Host header was set from the URL when the request was built.
            request.extensions = {**request.extensions, "sni_hostname": self.host}
            request.url = request.url.copy_with(host=self.address)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


__all__ = ["PinnedTransport"]
