"""A tool result's images on the providers' wire (real HTTP servers on loopback).

OpenAI-compatible: a vision model gets them as `image_url` parts in a `user` message
after the run of tool messages (the chat API takes no images in a tool message); a model
that cannot see images gets the text placeholder alone. Anthropic: image blocks inside
the `tool_result`, after its text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from seam.contracts.messages import ImagePart, Message, ToolCall
from seam.contracts.model import ModelRequest
from seam.services.llm.anthropic import AnthropicProvider
from seam.services.llm.openai_compat import OpenAICompatProvider
from seam.services.llm.tool_images import sees_images
from tests.support.anthropic_server import (
    AnthropicServer,
    anthropic_server_fixture,  # noqa: F401  (registers the `anthropic_server` fixture)
)
from tests.support.anthropic_server import text_reply as anthropic_text
from tests.support.openai_server import OpenAIServer, text_reply
from tests.support.providers import collect, provider_factory

PNG = ImagePart("image/png", "iVBORw0KGgo=", "ab" * 32, 8)
TEXT = "[image image/png, 8 bytes, sha256 abababababababab]"
CALLS = (ToolCall("c1", "mcp__shots__take", "{}"), ToolCall("c2", "read_file", "{}"))
HISTORY = (
    Message("user", "look"),
    Message("assistant", "", tool_calls=CALLS),
    Message("tool", TEXT, tool_call_id="c1", name="mcp__shots__take", images=(PNG,)),
    Message("tool", "plain", tool_call_id="c2", name="read_file"),
)


@pytest.fixture
async def openai_provider(openai_server: OpenAIServer) -> AsyncIterator[Any]:
    async with provider_factory(
        OpenAICompatProvider, [], base_url=openai_server.base_url, api_key="k", model="x"
    ) as build:
        yield build


async def sent(server: OpenAIServer, provider: Any, model: str) -> list[dict[str, Any]]:
    server.push(text_reply("seen"))
    await collect(provider(), ModelRequest(system="", messages=HISTORY, model=model))
    body = server.requests[-1].body
    assert isinstance(body, dict)
    return list(body["messages"])


async def test_a_vision_model_gets_image_parts_after_the_tool_messages(
    openai_server: OpenAIServer, openai_provider: Any
) -> None:
    messages = await sent(openai_server, openai_provider, "gpt-4o-mini")
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert messages[2]["content"] == TEXT
    assert messages[4]["content"] == [
        {"type": "text", "text": "The images mcp__shots__take returned:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]


async def test_a_model_that_cannot_see_gets_the_placeholder_alone(
    openai_server: OpenAIServer, openai_provider: Any
) -> None:
    messages = await sent(openai_server, openai_provider, "SmolLM2-135M-Instruct")
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
    assert messages[2]["content"] == TEXT


async def test_anthropic_gets_image_blocks_in_the_tool_result(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.push(anthropic_text("seen"))
    async with provider_factory(
        AnthropicProvider, [], base_url=anthropic_server.base_url, api_key="k", model="claude-x"
    ) as build:
        await collect(build(), ModelRequest(system="", messages=HISTORY))
    body = anthropic_server.message_requests[-1].body
    result = body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "c1"
    assert result["content"] == [
        {"type": "text", "text": TEXT},
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
        },
    ]


SEEING = (
    "gpt-4o gpt-4.1-mini gpt-5 o3 openai/gpt-4o llava-v1.6-mistral-7b Qwen2.5-VL-7B gemma-3-4b-it"
)
BLIND = "gpt-3.5-turbo SmolLM2-135M-Instruct llama-3.1-8b-instruct deepseek-chat"


def test_which_models_see_images() -> None:
    assert [name for name in SEEING.split() if not sees_images(name)] == []
    assert [name for name in BLIND.split() if sees_images(name)] == []
