"""The chaos suite's model: a loopback OpenAI server that decides each reply from the
request (a tool call for a new question, an answer once the tool result is in) and fails
at random, as real providers do: 5xx, a connection cut mid-stream, a stall longer than
the client's idle timeout.

Every answer is unique (it carries a request counter), so a transcript holding the same
assistant text twice proves the runtime stored one reply twice, not that the model
repeated itself.
"""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from dataclasses import replace
from typing import Any

from tests.support.openai_server import (
    MODELS_PATH,
    OpenAIServer,
    RecordedRequest,
    Reply,
    error_reply,
    text_reply,
    tool_call_reply,
)

FAULT_KINDS = ("http_5xx", "disconnect", "stall")


class ChaosModel(OpenAIServer):
    """`fault_rate`: the share of chat requests that fail; `tool_rate`: the share of new
    questions answered with a `write_file` call first (idempotent, so a worker killed
    mid-call has it run again on resume; the repair path)."""

    def __init__(
        self, *, seed: int, fault_rate: float = 0.15, tool_rate: float = 0.5, stall: float = 2.5
    ) -> None:
        super().__init__()
        self.random = random.Random(seed)
        self.fault_rate = fault_rate
        self.tool_rate = tool_rate
        self.stall_seconds = stall
        self.faults: Counter[str] = Counter()
        self.answers = 0
        self._count = 0
        self._local = threading.local()
        self._choice_lock = threading.Lock()

    def _record(self, request: RecordedRequest) -> None:
        # Keep the request for this handler thread: `_next_reply` decides from its body.
        self._local.request = request
        with self._lock:
            self.requests.append(request)

    def _wait_released(self) -> None:
        # A stall lasts a fixed time past the client's idle timeout, then the reply goes
        # on (to a client that has long given up on it).
        self._closing.wait(self.stall_seconds)

    def _next_reply(self, method: str, path: str) -> Reply:
        if path == MODELS_PATH:
            return self._models()
        request: RecordedRequest = self._local.request
        body = request.body if isinstance(request.body, dict) else {}
        messages: list[dict[str, Any]] = list(body.get("messages") or [])
        with self._choice_lock:
            self._count += 1
            n = self._count
            roll = self.random.random()
            fault = self.random.choice(FAULT_KINDS) if roll < self.fault_rate else None
            use_tool = self.random.random() < self.tool_rate
            if fault:
                self.faults[fault] += 1
        last = messages[-1] if messages else {}
        question = next(
            (str(m.get("content") or "") for m in reversed(messages) if m.get("role") == "user"),
            "",
        )
        tag = question.split()[-1] if question.split() else "none"
        if last.get("role") == "tool" or not use_tool:
            reply = text_reply(f"Answer #{n} to {tag}: done.", chunk_size=4)
            answered = True
        else:
            arguments = json.dumps({"path": f"notes/{tag}.txt", "content": f"note for {tag}\n"})
            reply = _unique_ids(
                tool_call_reply([("write_file", arguments)], text=f"Writing #{n}. "), n
            )
            answered = False
        if fault == "http_5xx":
            return error_reply(self.random.choice((500, 502, 503)))
        if fault == "disconnect":
            return reply.dropped(after=max(1, len(reply.parts) // 2))
        if fault == "stall":
            return reply.stalled(after=max(1, len(reply.parts) // 2))
        if answered:
            with self._choice_lock:
                self.answers += 1
        return reply


def _unique_ids(reply: Reply, n: int) -> Reply:
    """Tool call ids unique across the run, as a real provider's are."""
    parts = tuple(
        p.replace(b"call_0_write_file", f"call_{n}_write_file".encode())
        if isinstance(p, bytes)
        else p
        for p in reply.parts
    )
    return replace(reply, parts=parts)
