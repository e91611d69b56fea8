"""Network for `network = true` sandboxes: public destinations only, through a proxy.

A sandbox keeps its own network namespace even with the network on: inside there is
only its own loopback, so neither the host's loopback services nor anything on a private
range can be reached directly. Its one way out is this proxy, which runs in Seam's
process on a unix socket. The socket is bound into the sandbox, and a small bridge started
inside (`BRIDGE`, stdlib Python) listens on the sandbox's `127.0.0.1:PROXY_PORT` and
forwards each connection to it; `HTTP(S)_PROXY` and `ALL_PROXY` point there, so pip, curl,
git, npm and most HTTP clients use it. The proxy takes `CONNECT host:port` (HTTPS and any
TCP tunnel) and plain `GET http://...` requests, resolves the name itself and refuses
unless every address is public (`contracts/addresses.py`, the rule `web_fetch` follows;
`[sandbox] network_allow` lists exceptions), then connects to an address it checked.
The same design as Anthropic's sandbox-runtime; pasta and slirp4netns (Debian `passt`,
`slirp4netns`) can hide the host's loopback but not the private ranges of its networks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import socket
import tempfile
from collections.abc import Collection
from pathlib import Path

from seam.contracts.addresses import Resolver, allow_entry, destination_refusal


async def system_resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to, on the running loop's resolver (not blocking it):
    the I/O at the edge; the check itself is shared (`contracts.addresses`)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


log = logging.getLogger(__name__)

PROXY_PORT = 3128  # inside the sandbox's own network namespace
SOCKET_INSIDE = "/tmp/.seam-egress.sock"
HEAD_LIMIT = 16_384  # bytes of request line and headers read before refusing
CONNECT_TIMEOUT = 15.0


# Runs inside the sandbox: listen on the sandbox's loopback, hand each connection to the
# unix socket. The parent exits once it listens, so the command never races it.
BRIDGE = """
import os, socket, sys, threading
port, path = int(sys.argv[1]), sys.argv[2]
server = socket.socket()
server.bind(("127.0.0.1", port))
server.listen(64)
if os.fork():
    os._exit(0)
def pipe(a, b):
    try:
        while data := a.recv(65536):
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
def serve(client):
    upstream = socket.socket(socket.AF_UNIX)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        return
    threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
    pipe(upstream, client)
while True:
    threading.Thread(target=serve, args=(server.accept()[0],), daemon=True).start()
"""


def proxy_env() -> dict[str, str]:
    url = f"http://127.0.0.1:{PROXY_PORT}"
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
    env = {name: url for name in names} | {name.lower(): url for name in names}
    return env | {"NO_PROXY": "", "no_proxy": ""}


def bridge_command(python: str = "/usr/bin/python3") -> str:
    """The shell line that starts the bridge (stdio closed: it must not hold the output)."""
    code = BRIDGE.replace("'", "'\"'\"'")
    return (
        f"{python} -c '{code}' {PROXY_PORT} {SOCKET_INSIDE} </dev/null >/dev/null 2>&1"
        ' || { echo "seam: the sandbox network bridge did not start" >&2; exit 125; }'
    )


class EgressProxy:
    """The filtering proxy behind every networked sandbox of one provider."""

    def __init__(self, allow: Collection[str] = (), resolve: Resolver = system_resolve) -> None:
        self._allow = frozenset(allow_entry(entry) for entry in allow)
        self._resolve = resolve
        self._server: asyncio.base_events.Server | None = None
        self._dir: str | None = None
        self._lock = asyncio.Lock()

    @property
    def socket_path(self) -> str:
        assert self._dir is not None, "start() first"
        return str(Path(self._dir) / "egress.sock")

    async def start(self) -> str:
        """Listen (once); returns the unix socket's path on the host."""
        async with self._lock:
            if self._server is None:
                self._dir = tempfile.mkdtemp(prefix="seam-egress-")
                self._server = await asyncio.start_unix_server(self._handle, self.socket_path)
        return self.socket_path

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._serve(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > HEAD_LIMIT:
            return await _reply(writer, 431, "request head too large")
        line, _, rest = head.partition(b"\r\n")
        method, target, version = line.decode("latin-1").split(" ", 2)
        if method.upper() == "CONNECT":
            host, port = _split_host_port(target, 443)
            forward = b""
        elif target.lower().startswith("http://"):
            host, port, path = _split_url(target)
            forward = f"{method} {path} {version}\r\n".encode("latin-1") + rest
        else:
            return await _reply(writer, 400, "only CONNECT and http:// requests are proxied")
        upstream = await self._connect(host, port, writer)
        if upstream is None:
            return None
        up_reader, up_writer = upstream
        if forward:
            up_writer.write(forward)
        else:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()
        return None

    async def _connect(
        self, host: str, port: int, writer: asyncio.StreamWriter
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        try:
            addresses = await self._resolve(host, port)
        except OSError as exc:
            await _reply(writer, 502, f"could not resolve {host}: {exc}")
            return None
        refusal = destination_refusal(host, port, addresses, self._allow)
        if refusal is not None:
            log.info("sandbox egress refused %s:%s: %s", host, port, refusal)
            await _reply(writer, 403, f"refused {host}:{port}: {refusal}")
            return None
        for address in addresses:  # the checked addresses, never the name again
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(address, port), CONNECT_TIMEOUT
                )
            except (OSError, TimeoutError):
                continue
        await _reply(writer, 502, f"could not connect to {host}:{port}")
        return None


async def _reply(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    body = f"seam sandbox: {text}\n".encode()
    writer.write(
        f"HTTP/1.1 {status} {text[:60]}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("latin-1", "replace")
        + body
    )
    with contextlib.suppress(OSError):
        await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            if writer.can_write_eof():
                writer.write_eof()


def _split_host_port(target: str, default: int) -> tuple[str, int]:
    host, sep, port = target.rpartition(":")
    if not sep or "]" in port:  # no port, or an IPv6 literal without one
        host, port = target, str(default)
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"bad target {target!r}")
    return host, int(port)


def _split_url(url: str) -> tuple[str, int, str]:
    rest = url[len("http://") :]
    authority, slash, path = rest.partition("/")
    authority = authority.rpartition("@")[2]  # credentials are not ours to forward
    host, port = _split_host_port(authority, 80)
    return host, port, f"/{path}" if slash else "/"


def python_inside() -> str | None:
    """The interpreter that runs the bridge (the system's, visible in every sandbox)."""
    for path in ("/usr/bin/python3", "/bin/python3"):
        if os.access(path, os.X_OK):
            return path
    return None
