"""The OpenAI-compatible provider keeps one connection for all its calls.

It reads each answer's body to its end (past `data: [DONE]`), so httpx returns the
connection to its pool; a server that sends `[DONE]` and then holds the body open costs
the answer nothing (the drain is bounded, the connection is then dropped).
"""

from __future__ import annotations

import time

from seam.contracts.model import DoneChunk
from seam.services.llm.http import default_client
from seam.services.llm.lean_http import LeanTransport
from tests.services.test_openai_compat import Make, make  # noqa: F401  (the fixture)
from tests.support.openai_server import OpenAIServer, text_reply
from tests.support.providers import ask, collect, text_of


async def test_five_calls_share_one_connection(
    openai_server: OpenAIServer,
    make: Make,  # noqa: F811  (the fixture imported above)
) -> None:
    provider = make()
    for n in range(5):
        openai_server.push(text_reply(f"answer {n}"))
        chunks = await collect(provider, ask())
        assert text_of(chunks) == f"answer {n}"

    assert len(openai_server.chat_requests) == 5
    assert openai_server.connections_accepted == 1


async def test_a_body_held_open_after_done_still_answers(
    openai_server: OpenAIServer,
    make: Make,  # noqa: F811  (the fixture imported above)
) -> None:
    held = text_reply("whole")
    openai_server.push(held.stalled(after=len(held.parts)), text_reply("next"))
    provider = make()

    started = time.monotonic()
    chunks = await collect(provider, ask())

    assert text_of(chunks) == "whole"
    assert chunks[-1] == DoneChunk("stop")
    assert time.monotonic() - started < 5  # the drain gave up; no stall error
    # That connection could not be reused: the next call opens another.
    assert text_of(await collect(provider, ask())) == "next"
    assert openai_server.connections_accepted == 2


async def test_https_is_offered_http2_plain_http_gets_the_lean_transport() -> None:
    # HTTP/2 is agreed in the TLS handshake (ALPN): a server without it answers in 1.1.
    client = default_client("https://api.example.test/v1")
    assert client._transport._pool._http2 is True  # type: ignore[attr-defined]
    await client.aclose()
    client = default_client("http://127.0.0.1:1/v1")
    assert isinstance(client._transport, LeanTransport)
    await client.aclose()
