"""A person's images on the providers' wire (real HTTP servers on loopback): every user
message that shows stored images (this turn's and earlier ones') carries them, as
`image_url` parts with `data:` URLs for an OpenAI-compatible vision model and as image
blocks for Anthropic; a text-only model gets the placeholder lines alone (a session whose
model changed after the images were sent must not fail every request)."""

from __future__ import annotations

from typing import Any

from seam.contracts.images import with_placeholders
from seam.contracts.messages import Message
from seam.contracts.model import ModelRequest
from seam.services.llm.anthropic import AnthropicProvider
from seam.testing.images import png_part
from tests.mcp.test_image_wire import openai_provider
from tests.support.anthropic_server import (
    AnthropicServer,
    anthropic_server_fixture,  # noqa: F401  (registers the `anthropic_server` fixture)
)
from tests.support.anthropic_server import text_reply as anthropic_text
from tests.support.openai_server import OpenAIServer, text_reply
from tests.support.providers import collect, provider_factory

openai_provider = openai_provider  # the fixture, registered here
RED, BLUE = png_part(), png_part(20, 40, 220)
FIRST = with_placeholders("what colour?", [RED])
SECOND = with_placeholders("and this one?", [BLUE])
HISTORY = (
    Message("user", FIRST, images=(RED,)),
    Message("assistant", "Red."),
    Message("user", SECOND, images=(BLUE,)),
)


async def sent(server: OpenAIServer, provider: Any, model: str) -> list[dict[str, Any]]:
    server.push(text_reply("seen"))
    await collect(provider(), ModelRequest(system="", messages=HISTORY, model=model))
    return list(server.requests[-1].body["messages"])  # type: ignore[index]


def url(image: Any) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{image.data}"}}


async def test_a_vision_model_gets_every_stored_image_on_its_message(
    openai_server: OpenAIServer, openai_provider: Any
) -> None:
    messages = await sent(openai_server, openai_provider, "gpt-4o")
    assert messages[0]["content"] == [{"type": "text", "text": FIRST}, url(RED)]
    assert messages[2]["content"] == [{"type": "text", "text": SECOND}, url(BLUE)]


async def test_a_text_only_model_gets_the_placeholders_alone(
    openai_server: OpenAIServer, openai_provider: Any
) -> None:
    messages = await sent(openai_server, openai_provider, "gpt-3.5-turbo")
    assert [m["content"] for m in messages] == [FIRST, "Red.", SECOND]


async def test_anthropic_gets_image_blocks_after_the_text(
    anthropic_server: AnthropicServer,
) -> None:
    server = anthropic_server
    server.push(anthropic_text("seen"))
    where = {"base_url": server.base_url, "api_key": "k", "model": "claude-sonnet-4-5"}
    async with provider_factory(AnthropicProvider, [], **where) as build:
        await collect(build(), ModelRequest(system="You see.", messages=HISTORY))
    body = server.message_requests[-1].body
    for message, text, image in ((0, FIRST, RED), (2, SECOND, BLUE)):
        # Without the prompt-cache marker the provider puts on its last blocks.
        blocks = [
            {k: v for k, v in b.items() if k != "cache_control"}
            for b in body["messages"][message]["content"]
        ]
        source = {"type": "base64", "media_type": "image/png", "data": image.data}
        assert blocks == [{"type": "text", "text": text}, {"type": "image", "source": source}]
