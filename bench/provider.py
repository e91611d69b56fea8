"""CPU a model turn costs through the OpenAI provider, next to a minimal asyncio client.

A turn is three streamed chat completions, as a turn with two tool rounds makes them: a
tool call, another tool call, then a 60-delta answer. A server in a process of its own
(so its CPU is not counted) answers on 127.0.0.1 with chunked event streams and honours
keep-alive. The same requests are made by

- `seam`: `OpenAICompatProvider.stream`, every chunk consumed;
- `floor`: a minimal asyncio client (one kept-alive socket, chunked decoding, one
  `json.loads` a data line, text and tool arguments gathered): what any client must do.

Rounds alternate between the two; the figure is CPU time of this process per turn (median
over rounds), and the number of TCP connections the server accepted for each. Run:

    .venv/bin/python bench/provider.py [--turns 200] [--rounds 5]

`PYTHONPATH=<older checkout>/src` measures another checkout's provider for a before figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine

from seam.contracts.messages import Message
from seam.contracts.model import ModelRequest, ToolDefinition
from seam.services.llm.openai_compat import OpenAICompatProvider

MODEL = "bench-model"
READ_FILE = ToolDefinition(
    "read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}
)


# -- the server (a process of its own: `provider.py --serve`) ----------------------------


def _event(delta: dict[str, object], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _usage() -> bytes:
    usage = {"prompt_tokens": 900, "completion_tokens": 60, "total_tokens": 960}
    body = {"id": "chatcmpl-bench", "model": MODEL, "choices": [], "usage": usage}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _tool_reply(n: int) -> list[bytes]:
    head = {"index": 0, "id": f"call_{n}", "type": "function"}
    events = [_event({"role": "assistant", "content": None})]
    events.append(_event({"tool_calls": [{**head, "function": {"name": "read_file"}}]}))
    for piece in ('{"pa', 'th": ', f'"note{n}', '.txt"}'):
        events.append(_event({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    return [*events, _event({}, "tool_calls"), _usage(), b"data: [DONE]\n\n"]


def _text_reply() -> list[bytes]:
    events = [_event({"role": "assistant", "content": ""})]
    events += [_event({"content": f"word{i} "}) for i in range(60)]
    return [*events, _event({}, "stop"), _usage(), b"data: [DONE]\n\n"]


def _chunked(events: list[bytes]) -> bytes:
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    return head + b"".join(b"%X\r\n%s\r\n" % (len(e), e) for e in events) + b"0\r\n\r\n"


REPLIES = [_chunked(_tool_reply(0)), _chunked(_tool_reply(1)), _chunked(_text_reply())]


async def _serve() -> None:
    """Answer every request with the next reply of the turn; print the port, then the
    connections accepted once stdin closes."""
    accepted = 0
    served = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted, served
        accepted += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                writer.write(REPLIES[served % len(REPLIES)])
                served += 1
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    print(accepted, flush=True)
    server.close()


# -- the two clients -----------------------------------------------------------------------


def _request(turn: int, call: int) -> ModelRequest:
    """The turn's `call`-th request: the history grows by a tool round each call."""
    messages = [Message("user", f"Read the notes, turn {turn}.")]
    for n in range(call):
        messages.append(Message("assistant", "", tool_calls=()))
        messages.append(Message("user", f"note {n} says hello"))
    return ModelRequest(system="You are terse.", messages=tuple(messages), tools=(READ_FILE,))


async def seam_turns(port: int, turns: int) -> None:
    provider = OpenAICompatProvider(
        base_url=f"http://127.0.0.1:{port}/v1", api_key="bench", model=MODEL
    )
    try:
        for turn in range(turns):
            for call in range(3):
                async for _chunk in provider.stream(_request(turn, call)):
                    pass
    finally:
        await provider.aclose()


class Floor:
    """The least a client can do: one kept-alive socket, chunked decoding, JSON per line."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def call(self, body: bytes) -> tuple[str, str]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        reader = self.reader
        assert reader is not None
        self.writer.write(
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n"
            b"content-type: application/json\r\naccept: text/event-stream\r\n"
            b"authorization: Bearer bench\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
        )
        await reader.readuntil(b"\r\n\r\n")
        text, arguments, pending = [], [], b""
        while True:
            size = int((await reader.readuntil(b"\r\n"))[:-2], 16)
            data = await reader.readexactly(size + 2)
            if not size:
                break
            pending += data[:-2]
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if not line.startswith(b"data: ") or line == b"data: [DONE]":
                    continue
                event = json.loads(line[6:])
                for choice in event["choices"]:
                    delta = choice["delta"]
                    if delta.get("content"):
                        text.append(delta["content"])
                    for call in delta.get("tool_calls") or ():
                        arguments.append(call["function"].get("arguments", ""))
        return "".join(text), "".join(arguments)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def floor_turns(port: int, turns: int) -> None:
    floor = Floor(port)
    try:
        for turn in range(turns):
            for call in range(3):
                request = _request(turn, call)
                messages = [{"role": "system", "content": request.system}]
                messages += [{"role": m.role, "content": m.content} for m in request.messages]
                body = {"model": MODEL, "messages": messages, "stream": True}
                await floor.call(json.dumps(body).encode())
    finally:
        await floor.close()


# -- measuring -------------------------------------------------------------------------------


def measure(
    client: Callable[[int, int], Coroutine[None, None, None]], turns: int
) -> tuple[float, int]:
    """CPU ms per turn of this process, and the connections the server accepted."""
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None and server.stdin is not None
    port = int(server.stdout.readline())
    asyncio.run(client(port, 5))  # warm-up: imports, first connection
    start = time.process_time()
    asyncio.run(client(port, turns))
    cpu = (time.process_time() - start) * 1000 / turns
    server.stdin.close()
    connections = int(server.stdout.readline()) - 1  # less the warm-up's
    server.wait()
    return cpu, connections


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve())
        return
    seam: list[float] = []
    floor: list[float] = []
    for _ in range(args.rounds):
        cpu, seam_connections = measure(seam_turns, args.turns)
        seam.append(cpu)
        cpu, floor_connections = measure(floor_turns, args.turns)
        floor.append(cpu)
    ratio = statistics.median(s / f for s, f in zip(seam, floor, strict=True))
    print(f"{args.turns} turns of 3 streamed calls, median of {args.rounds} rounds (CPU ms/turn)")
    print(f"  seam provider  {statistics.median(seam):6.2f} ms   connections {seam_connections}")
    print(f"  asyncio floor  {statistics.median(floor):6.2f} ms   connections {floor_connections}")
    print(f"  ratio          {ratio:6.2f} x")


if __name__ == "__main__":
    main()
