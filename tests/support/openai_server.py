"""A scriptable OpenAI chat-completions server on 127.0.0.1, speaking the real wire format.

Tests queue replies (`server.push(text_reply("Hello"))`), point a provider (or the `seam`
CLI, via `OPENAI_BASE_URL=server.base_url`) at it, and assert on what the client shows
and on `server.requests`. Streams are sent with chunked transfer encoding and flushed
event by event, as real servers do, so a client sees them arrive piece by piece.

Markers shape a reply's delivery: `STALL` blocks the handler until `release()` (or
teardown), `DROP` closes the connection mid-body and `SILENT` (first) accepts the
request but never answers, not even a status line. Use them through `Reply.stalled`,
`Reply.dropped` and `Reply.silent`; `Reply.trickled` sends the body a byte at a time.
For the faults no server can script, `closed_port()` is a port nothing listens on and
`unanswered_port()` one where connecting hangs.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

import pytest

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
DEFAULT_MODEL = "test-model"
# A stalled handler gives up on its own after this long, so a test that forgets to
# release never leaves a thread behind for the rest of the session.
_STALL_LIMIT = 30.0


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


STALL = _Marker("STALL")
DROP = _Marker("DROP")
SILENT = _Marker("SILENT")
Part = bytes | _Marker


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP response: status, headers and the body as separately sent parts."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    parts: tuple[Part, ...] = ()
    content_type: str = "text/event-stream"
    # Seconds between bytes of the body (0: each part is sent whole).
    trickle: float = 0.0
    # Seconds before each part of the body (0: one straight after the other).
    pace: float = 0.0

    def stalled(self, after: int = 0) -> Reply:
        """Send the headers and the first `after` parts, then nothing until released."""
        return replace(self, parts=(*self.parts[:after], STALL, *self.parts[after:]))

    def dropped(self, after: int) -> Reply:
        """Send the first `after` parts, then cut the connection mid-body."""
        return replace(self, parts=(*self.parts[:after], DROP))

    def silent(self) -> Reply:
        """Read the request, then send nothing at all until released (or teardown)."""
        return replace(self, parts=(SILENT,))

    def trickled(self, interval: float = 1.0) -> Reply:
        """Send the headers, then the body one byte every `interval` seconds."""
        return replace(self, trickle=interval)

    def paced(self, interval: float) -> Reply:
        """Send each part of the body `interval` seconds after the one before."""
        return replace(self, pace=interval)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]  # lower-case names
    body: Any  # parsed JSON, or the raw text when it was not JSON, or None when empty


# -- reply builders ----------------------------------------------------------------------


def sse(payload: Any) -> bytes:
    """One server-sent event carrying `payload` as JSON (or `[DONE]` as is)."""
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n".encode()


def chunk(
    delta: Mapping[str, Any], finish_reason: str | None = None, *, model: str = DEFAULT_MODEL
) -> bytes:
    """A `chat.completion.chunk` event with one choice."""
    return sse(
        {
            "id": "chatcmpl-seam-test",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish_reason}],
            "usage": None,
        }
    )


def usage(
    prompt_tokens: int, completion_tokens: int, *, cached_tokens: int = 0, reasoning_tokens: int = 0
) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
    }


def usage_chunk(body: Mapping[str, Any], *, model: str = DEFAULT_MODEL) -> bytes:
    """The final event OpenAI sends for `stream_options.include_usage`: empty choices."""
    return sse(
        {
            "id": "chatcmpl-seam-test",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "choices": [],
            "usage": dict(body),
        }
    )


def stream_reply(events: Iterable[bytes], *, done: bool = True) -> Reply:
    """A 200 event stream of the given events, ended with `data: [DONE]` by default."""
    parts = tuple(events)
    return Reply(parts=(*parts, sse("[DONE]")) if done else parts)


def text_reply(
    text: str,
    chunk_size: int = 3,
    *,
    reasoning: str = "",
    reasoning_field: str = "reasoning_content",
    finish_reason: str = "stop",
    usage_body: Mapping[str, Any] | None = None,
    model: str = DEFAULT_MODEL,
) -> Reply:
    """A streamed answer: role chunk, reasoning then text in `chunk_size` pieces, finish,
    usage (default: 12 prompt tokens, one completion token per piece), `[DONE]`."""
    events = [chunk({"role": "assistant", "content": ""}, model=model)]
    events += [
        chunk({reasoning_field: piece}, model=model) for piece in _pieces(reasoning, chunk_size)
    ]
    pieces = _pieces(text, chunk_size)
    events += [chunk({"content": piece}, model=model) for piece in pieces]
    events.append(chunk({}, finish_reason, model=model))
    events.append(usage_chunk(usage_body or usage(12, len(pieces)), model=model))
    return stream_reply(events)


def tool_call_reply(
    calls: Sequence[tuple[str, str]],
    split_every: int = 5,
    *,
    text: str = "",
    interleave: bool = False,
    with_ids: bool = True,
    finish_reason: str = "tool_calls",
    model: str = DEFAULT_MODEL,
    id_offset: int = 0,
) -> Reply:
    """Tool calls `(name, arguments_json)` streamed the way OpenAI does it (ids
    `call_<id_offset + index>_<name>`, so several replies can number their calls as one).

    Each call's first fragment carries its index, id and name; its arguments follow in
    `split_every`-character fragments. `interleave` sends the calls' fragments round-robin
    (index 0, 1, 0, 1, ...) instead of one call after another.
    """
    events = [chunk({"role": "assistant", "content": None}, model=model)]
    events += [chunk({"content": piece}, model=model) for piece in _pieces(text, 3)]
    per_call: list[list[bytes]] = []
    for index, (name, arguments) in enumerate(calls):
        head: dict[str, Any] = {
            "index": index,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        if with_ids:
            head["id"] = f"call_{id_offset + index}_{name}"
        fragments = [chunk({"tool_calls": [head]}, model=model)]
        fragments += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}, model=model)
            for piece in _pieces(arguments, split_every)
        ]
        per_call.append(fragments)
    if interleave:
        longest = max((len(fragments) for fragments in per_call), default=0)
        events += [f[i] for i in range(longest) for f in per_call if i < len(f)]
    else:
        events += [fragment for fragments in per_call for fragment in fragments]
    events.append(chunk({}, finish_reason, model=model))
    events.append(usage_chunk(usage(20, 9), model=model))
    return stream_reply(events)


def error_reply(
    status: int, body: Any = None, *, headers: Mapping[str, str] | None = None
) -> Reply:
    """A JSON error response (default body: OpenAI's `{"error": {...}}` shape)."""
    if body is None:
        body = {"error": {"message": f"scripted HTTP {status}", "type": "server_error"}}
    text = body if isinstance(body, str) else json.dumps(body)
    return Reply(
        status=status,
        headers=dict(headers or {}),
        parts=(text.encode(),),
        content_type="application/json",
    )


def raw_reply(
    lines: Iterable[str], *, status: int = 200, content_type: str = "text/event-stream"
) -> Reply:
    """Arbitrary body lines (each gets a `\\n`), for malformed or non-SSE responses."""
    return Reply(
        status=status,
        parts=tuple(f"{line}\n".encode() for line in lines),
        content_type=content_type,
    )


def html_reply(title: str, *, status: int = 200) -> Reply:
    """An HTML page (a captive portal's, a proxy's error page) where a stream belongs."""
    page = (
        "<!DOCTYPE html>\n<html>\n<head><title>"
        f"{title}</title></head>\n<body><h1>{title}</h1><p>nginx</p></body>\n</html>\n"
    )
    return Reply(status=status, parts=(page.encode(),), content_type="text/html")


def json_reply(body: Any, *, status: int = 200) -> Reply:
    """A plain JSON body (an error object a proxy sends with status 200, say)."""
    return Reply(status=status, parts=(json.dumps(body).encode(),), content_type="application/json")


@contextlib.contextmanager
def unanswered_port() -> Iterator[int]:
    """A loopback port where connecting hangs, as with a host that drops packets: it
    listens with a backlog of one, already taken, so the kernel ignores further SYNs."""
    with socket.socket() as listener, socket.socket() as filler:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = int(listener.getsockname()[1])
        filler.connect(("127.0.0.1", port))
        yield port


# The sockets behind `closed_port()`, kept bound for the life of the test process.
_HELD_CLOSED: list[socket.socket] = []


def closed_port() -> int:
    """A loopback port nothing listens on: connecting is refused. The port stays bound
    (never listening) until the test process ends, so no other test, xdist worker or
    process can start listening on it meanwhile (a port merely free a moment ago can be
    handed to the next `bind(0)` anywhere on the machine)."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    _HELD_CLOSED.append(probe)
    return int(probe.getsockname()[1])


def models_reply(model_ids: Iterable[str]) -> Reply:
    body = {
        "object": "list",
        "data": [
            {"id": model_id, "object": "model", "created": 1_700_000_000, "owned_by": "seam"}
            for model_id in model_ids
        ],
    }
    return Reply(parts=(json.dumps(body).encode(),), content_type="application/json")


def _pieces(text: str, size: int) -> list[str]:
    if size < 1:
        raise ValueError(f"chunk size must be >= 1, got {size}")
    return [text[i : i + size] for i in range(0, len(text), size)]


# -- the server ---------------------------------------------------------------------------


class ScriptedServer:
    """A loopback server answering from queued replies and recording every request.

    Subclasses name the main path `push()` scripts and say what to answer when the
    script runs out (`_exhausted`) or a path is unknown (`_not_found`), in their API's
    error shape. Use as a context manager.
    """

    main_path = CHAT_PATH
    url_suffix = "/v1"
    thread_name = "openai-test-server"

    def __init__(self, models: Sequence[str] = (DEFAULT_MODEL,)) -> None:
        self.models = list(models)
        self.requests: list[RecordedRequest] = []
        self._queues: dict[str, deque[Reply]] = {self.main_path: deque(), MODELS_PATH: deque()}
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._closing = threading.Event()
        self._connections: set[socket.socket] = set()
        # Connections accepted so far (a test of connection reuse counts them).
        self.connections_accepted = 0
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None
        self.port: int = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}{self.url_suffix}"

    def push(self, *replies: Reply) -> None:
        """Queue replies for the main path, answered in order."""
        with self._lock:
            self._queues[self.main_path].extend(replies)

    def push_models(self, *replies: Reply) -> None:
        """Queue replies for `GET /v1/models`; when none are queued it lists `models`."""
        with self._lock:
            self._queues[MODELS_PATH].extend(replies)

    @property
    def pending(self) -> int:
        """Main-path replies still queued (a test can assert its script was used up)."""
        with self._lock:
            return len(self._queues[self.main_path])

    def release(self) -> None:
        """Let every stalled reply continue."""
        self._released.set()

    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},  # shutdown() waits up to one poll
            name=self.thread_name,
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop accepting, release stalls, cut open connections, join every thread."""
        self._closing.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
        self.release()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- what the API answers when the script does not say --

    def _models(self) -> Reply:
        return models_reply(self.models)

    def _exhausted(self, count: int) -> Reply:
        return error_reply(
            500,
            {
                "error": {
                    "message": f"openai test server: the script ran out of replies "
                    f"(request #{count} to {self.main_path}); push() more",
                    "type": "script_exhausted",
                }
            },
        )

    def _not_found(self, method: str, path: str) -> Reply:
        return error_reply(
            404, {"error": {"message": f"no route for {method} {path}", "type": "not_found"}}
        )

    # -- used by the handler threads --

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self, method: str, path: str) -> Reply:
        with self._lock:
            queue = self._queues.get(path)
            reply = queue.popleft() if queue else None
            count = len(self.requests)
        if reply is not None:
            return reply
        if path == MODELS_PATH and method == "GET":
            return self._models()
        if path == self.main_path and method == "POST":
            return self._exhausted(count)
        return self._not_found(method, path)

    def _track(self, connection: socket.socket, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(connection)
                self.connections_accepted += 1
            else:
                self._connections.discard(connection)

    def _wait_released(self) -> None:
        self._released.wait(_STALL_LIMIT)

    def _pause(self, seconds: float) -> bool:
        """Wait between trickled bytes; False once the server is closing."""
        return not self._closing.wait(seconds)


class OpenAIServer(ScriptedServer):
    """The OpenAI chat-completions server."""

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == CHAT_PATH]


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = False  # joined by server_close, so no handler outlives the test
    block_on_close = True
    owner: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up mid-reply are part of the script (timeouts, drops)."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    timeout = _STALL_LIMIT  # an idle keep-alive connection ends on its own eventually

    def setup(self) -> None:
        super().setup()
        # Real servers disable Nagle; without it every small event waits on a delayed ACK.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.owner._track(self.connection, True)

    def finish(self) -> None:
        self.server.owner._track(self.connection, False)
        with contextlib.suppress(OSError):
            super().finish()

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: pytest output is for failures, and `requests` records everything."""

    def _serve(self) -> None:
        owner = self.server.owner
        path = self.path.split("?", 1)[0]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        headers = {name.lower(): value for name, value in self.headers.items()}
        owner._record(RecordedRequest(self.command, path, headers, body))
        self._send(owner._next_reply(self.command, path))

    def _send(self, reply: Reply) -> None:
        parts = reply.parts
        if parts and parts[0] is SILENT:
            self.server.owner._wait_released()
            self.close_connection = True
            return
        self.send_response_only(reply.status)
        self.send_header("Content-Type", reply.content_type)
        names = {name.lower() for name in reply.headers}
        if "date" not in names:
            self.send_header("Date", formatdate(time.time(), usegmt=True))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        first = parts[0] if parts else b""
        if len(parts) <= 1 and isinstance(first, bytes) and not (reply.trickle or reply.pace):
            # One piece: send it with a length.
            self.send_header("Content-Length", str(len(first)))
            self.end_headers()
            self.wfile.write(first)
            return
        self.send_header("Transfer-Encoding", "chunked")
        if reply.content_type == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        try:
            for part in parts:
                if part is STALL:
                    self.server.owner._wait_released()
                elif part is DROP:
                    self.close_connection = True
                    return
                elif isinstance(part, bytes) and part and reply.trickle:
                    for byte in part:
                        if not self.server.owner._pause(reply.trickle):
                            self.close_connection = True
                            return
                        self.wfile.write(b"1\r\n%c\r\n" % byte)
                        self.wfile.flush()
                elif isinstance(part, bytes) and part:
                    if reply.pace and not self.server.owner._pause(reply.pace):
                        self.close_connection = True
                        return
                    self.wfile.write(b"%X\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client hung up (its timeout, or it stopped reading)
            self.close_connection = True


@pytest.fixture(name="openai_server")
def openai_server_fixture() -> Iterator[OpenAIServer]:
    """A running server as `openai_server`; stalls released, threads joined at teardown.

    Named apart from the fixture so a test module can import it without its parameters
    shadowing the import: `from tests.support.openai_server import openai_server_fixture`.
    """
    with OpenAIServer() as server:
        yield server
