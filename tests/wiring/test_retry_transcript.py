"""A reply cut off mid-stream on every retry leaves one interrupted message, not one per
attempt, and the model reads that cut-off text once (issue #12)."""

from __future__ import annotations

from seam.contracts.execution import ExecutionStore
from seam.core.coordinator import CUT_OFF_NOTE, Coordinator
from seam.core.execution import InMemoryExecutionStore
from seam.services.llm.openai_compat import OpenAICompatProvider
from seam.wiring import assemble_runtime
from tests.support.openai_server import DEFAULT_MODEL, OpenAIServer, text_reply


async def _ask_through_failures(server: OpenAIServer, store: ExecutionStore, failures: int) -> str:
    for _ in range(failures):
        # The role chunk and two pieces ("Hel", "lo "), then the connection drops.
        server.push(text_reply("Hello there, friend").dropped(after=3))
    server.push(text_reply("All done."))
    provider = OpenAICompatProvider(
        base_url=server.base_url, api_key="k", model=DEFAULT_MODEL, max_retries=0, timeout=5.0
    )
    coordinator = Coordinator(store, backoff=(0.0,), max_attempts=failures + 1)
    async with assemble_runtime(model=provider, store=store, coordinator=coordinator) as rt:
        sub = await rt.ask("s", "hi")
        assert sub.outcome == "completed", sub.error
        assert sub.attempts == failures + 1
        return rt.session_key_for("s")


async def test_retries_after_mid_stream_failures_keep_one_interrupted_message(
    openai_server: OpenAIServer,
) -> None:
    store = InMemoryExecutionStore()
    key = await _ask_through_failures(openai_server, store, failures=3)

    messages = await store.messages(key)
    assert [(m.role, m.content, m.interrupted) for m in messages] == [
        ("user", "hi", False),
        ("assistant", "Hello ", True),
        ("assistant", "All done.", False),
    ]
    requests = openai_server.chat_requests
    assert len(requests) == 4
    for request in requests[1:]:
        body = request.body
        assert isinstance(body, dict)
        sent = [m.get("content") for m in body["messages"]]
        # The cut-off text once, and the model is told it was cut off.
        assert sent.count("Hello ") == 1
        assert CUT_OFF_NOTE in sent[0]


async def test_a_single_failure_keeps_its_cut_off_text(openai_server: OpenAIServer) -> None:
    store = InMemoryExecutionStore()
    key = await _ask_through_failures(openai_server, store, failures=1)
    interrupted = [m.content for m in await store.messages(key) if m.interrupted]
    assert interrupted == ["Hello "]
