"""A real TCP listener on 127.0.0.1 that keeps every byte sent to it.

It stands for a service on the person's machine (a database, a dev server, an exfiltration
endpoint a hostile model hopes to reach): the tests read `received` afterwards to see
whether a command got through to the host's loopback, and with what.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from types import TracebackType
from typing import Self

_READ = 65536
_KEEP = 10_000_000  # bytes kept per connection, so a flood cannot exhaust the test's memory
_IDLE = 5.0  # seconds a connection may stay silent before the listener gives up on it


def _http_request_complete(data: bytes) -> bool:
    """Whether `data` is a whole HTTP request (headers, and the body they announce)."""
    if not data.startswith((b"GET ", b"POST ", b"PUT ", b"HEAD ")):
        return False
    head, found, body = data.partition(b"\r\n\r\n")
    if not found:
        return False
    match = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return len(body) >= (int(match.group(1)) if match else 0)


class LoopbackListener:
    """Accepts connections on a free loopback port; `received` holds one bytes object per
    connection (what the peer sent until it closed or went idle)."""

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.1)
        self.port: int = self._server.getsockname()[1]
        self._lock = threading.Lock()
        self._received: list[bytearray] = []
        self._stop = threading.Event()  # readers give up
        self._closing = threading.Event()  # the accepter stops
        self._threads: list[threading.Thread] = []
        self._accepter = threading.Thread(target=self._accept, name="loopback-listener")

    @property
    def received(self) -> list[bytes]:
        with self._lock:
            return [bytes(data) for data in self._received]

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._serve(conn)

    def _serve(self, conn: socket.socket) -> None:
        data = bytearray()
        with self._lock:
            self._received.append(data)
        thread = threading.Thread(target=self._read, args=(conn, data), daemon=True)
        self._threads.append(thread)
        thread.start()

    def settle(self) -> list[bytes]:
        """Everything received, once the senders are gone: stop accepting, take the
        connections still queued, and wait for each reader to see its peer close."""
        self._closing.set()
        self._accepter.join()
        self._server.setblocking(False)
        while True:
            try:
                conn, _ = self._server.accept()
            except (BlockingIOError, OSError):
                break
            conn.setblocking(True)
            self._serve(conn)
        for thread in self._threads:
            thread.join(timeout=_IDLE)
        return self.received

    def _read(self, conn: socket.socket, data: bytearray) -> None:
        with conn:
            conn.settimeout(_IDLE)
            with contextlib.suppress(OSError):
                while not self._stop.is_set():
                    chunk = conn.recv(_READ)
                    if not chunk:
                        break
                    with self._lock:
                        if len(data) < _KEEP:
                            data.extend(chunk[: _KEEP - len(data)])
                        whole = _http_request_complete(bytes(data))
                    if whole:  # an HTTP client waits for an answer before it closes
                        conn.sendall(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
                        break

    def __enter__(self) -> Self:
        self._accepter.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._closing.set()
        if self._accepter.is_alive():
            self._accepter.join()
        self._server.close()
        for thread in self._threads:
            thread.join(timeout=_IDLE)
