"""Which network destinations are not public: one rule for every way out of Seam.

`web_fetch` (plugins/tools/web.py) and the sandbox's egress proxy (services/sandbox/
egress.py) both resolve a name themselves, then refuse when any address it resolves to is
loopback, link-local, private, CGNAT, multicast, reserved, unspecified, or otherwise not
global (IPv6 ULA and link-local included, and IPv4 embedded in IPv6 judged as itself),
unless the person listed the host in an allow list. Pure functions over `ipaddress`; the
resolution is the caller's, so the answer is about the very addresses it will connect to.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Sequence

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
        if reason is not None:
            return f"{address} is {reason}" if address == host else f"{host} is {address}, {reason}"
    return None
