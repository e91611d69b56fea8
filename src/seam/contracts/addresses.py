"""Which network destinations are not public: one rule for every way out of Seam.

`web_fetch` (plugins/tools/web.py) and the sandbox's egress proxy (services/sandbox/
egress.py) both resolve a name themselves, then refuse when any address it resolves to is
loopback, link-local, private, CGNAT, multicast, reserved, unspecified, or otherwise not
global (IPv6 ULA and link-local included, and IPv4 embedded in IPv6 judged as itself),
unless the person listed the host (or an address or network: "10.0.0.0/8") in an allow
list. `destination_refusal` is a pure function over `ipaddress`; `checked_addresses`
resolves the name first (on the event loop's resolver, which does not block it), so every
path out (webhook deliveries, `web_fetch`, the sandbox proxy) asks one question and
connects to the very addresses that were checked (no DNS rebinding in between).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Collection, Sequence

# (host, port) -> the addresses to connect to, in order of preference.
Resolver = Callable[[str, int], Awaitable[list[str]]]

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def address_refusal(address: str) -> str | None:
    """What kind of non-public address `address` is ("a private address"), or None."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            reason = address_refusal(str(embedded))
            if reason is not None:
                return f"an address embedding {embedded}, {reason}"
    for flag, what in (
        (ip.is_unspecified, "an unspecified address"),
        (ip.is_loopback, "a loopback address"),
        (ip.is_link_local, "a link-local address"),
        (ip.is_multicast, "a multicast address"),
        (ip.is_private, "a private address"),
        (ip.is_reserved, "a reserved address"),
        (not ip.is_global, "not a public address"),  # CGNAT 100.64/10 among others
    ):
        if flag:
            return what
    return None


def allow_entry(entry: str) -> str:
    """One spelling for allow-list entries: lower case, IPv6 in brackets ("[::1]:8080")."""
    entry = entry.strip().lower().rstrip(".")
    return f"[{entry}]" if entry.count(":") > 1 and not entry.startswith("[") else entry


def allowed(host: str, port: int, allow: Collection[str]) -> bool:
    """True when `host` (or `host:port`) is on an allow list normalised by `allow_entry`."""
    named = allow_entry(host)
    return named in allow or f"{named}:{port}" in allow


def in_allowed_network(address: str, allow: Collection[str]) -> bool:
    """True when `address` is an allow-list entry, or inside one written as a network."""
    ip = ipaddress.ip_address(address)
    for entry in allow:
        try:
            network = ipaddress.ip_network(entry.strip("[]"), strict=False)
        except ValueError:
            continue  # a host name, or host:port
        if ip in network:
            return True
    return False


def destination_refusal(
    host: str, port: int, addresses: Sequence[str], allow: Collection[str] = ()
) -> str | None:
    """Why connecting to `host` at `addresses` is refused, or None when it may go ahead."""
    if allowed(host, port, allow):
        return None
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return f"{host} is a local host name"
    if not addresses:
        return f"{host} resolves to no address"
    for address in addresses:
        reason = address_refusal(address)
        if reason is not None and not in_allowed_network(address, allow):
            return (
                f"{address} is {reason}"
                if address == host
                else f"{host} resolves to {address}, {reason}"
            )
    return None


class AddressRefused(Exception):
    """A destination that is not public and not on the allow list; the message says why."""


async def checked_addresses(
    host: str, port: int, allow: Collection[str], resolve: Resolver
) -> list[str]:
    """The addresses to connect to for `host`, each of them checked: `AddressRefused` when
    one is not public and neither it nor the host is on `allow` (entries normalised by
    `allow_entry`); `OSError` when the name does not resolve (which may pass)."""
    name = host.strip("[]").rstrip(".").lower()
    if not allowed(name, port, allow) and (name == "localhost" or name.endswith(".localhost")):
        raise AddressRefused(f"{host} is a local host name")
    addresses = await resolve(name, port)
    reason = destination_refusal(name, port, addresses, allow)
    if reason is not None:
        raise AddressRefused(reason)
    return addresses


# What a refused destination's message tells the person to do about it.
ALLOW_PRIVATE_ADVICE = "add it to [network] allow_private to allow it"


class Unreachable(Exception):
    """A URL's host that may not or cannot be connected to; the message says why, in one
    line. `refused`: not public and not allowed (asking again will not help); otherwise
    its name did not resolve (it may later)."""

    def __init__(self, message: str, *, refused: bool) -> None:
        super().__init__(message)
        self.refused = refused


async def url_addresses(
    url: str, host: str, port: int, allow: Collection[str], resolve: Resolver, advice: str
) -> list[str]:
    """`checked_addresses` for the host of `url`, its failures said one way for every
    caller: "refused URL: why; `advice`" or "could not resolve HOST: error"."""
    try:
        return await checked_addresses(host, port, allow, resolve)
    except AddressRefused as exc:
        raise Unreachable(f"refused {url}: {exc}; {advice}", refused=True) from None
    except OSError as exc:
        raise Unreachable(f"could not resolve {host}: {exc}", refused=False) from None
