"""Image parts through the OpenAI-compatible API (issue 26): the official client sends a
picture to `seam serve`; a model that sees images gets it on its own wire (the OpenAI
provider against a loopback server: `image_url` parts in the user message), one that
does not is a 400 naming the part, and so is an image Seam would have to fetch. The
vision check itself reads the personality's model from the settings."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import openai
import pytest

from seam.contracts.personality import Personality
from seam.services.llm.openai_compat import OpenAICompatProvider
from seam.wiring.settings import load_settings
from seam.wiring.vision import vision_check
from tests.openai_api.support import client_for
from tests.support.openai_server import OpenAIServer, text_reply
from tests.support.providers import provider_factory
from tests.web.harness import serving

PNG = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
PICTURE = f"data:image/png;base64,{PNG}"
ASKED = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is in this picture?"},
            {"type": "image_url", "image_url": {"url": PICTURE}},
        ],
    }
]


@pytest.fixture
async def vision_model(openai_server: OpenAIServer) -> AsyncIterator[Any]:
    async with provider_factory(
        OpenAICompatProvider, [], base_url=openai_server.base_url, api_key="k", model="gpt-4o"
    ) as build:
        yield build()


def last_user_content(server: OpenAIServer) -> Any:
    body = server.chat_requests[-1].body
    assert isinstance(body, dict)
    return [m for m in body["messages"] if m["role"] == "user"][-1]["content"]


async def test_a_picture_reaches_a_model_that_sees_images(
    tmp_path: Path, openai_server: OpenAIServer, vision_model: Any
) -> None:
    openai_server.push(text_reply("A single pixel."))
    async with serving(vision_model, tmp_path, sees_images=True) as served:
        got = await client_for(served).chat.completions.create(model="default", messages=ASKED)
    assert got.choices[0].message.content == "A single pixel."
    text, image = last_user_content(openai_server)
    assert text["type"] == "text" and text["text"].startswith("what is in this picture?")
    assert "[image image/png, 70 bytes, sha256 " in text["text"]  # the stored placeholder
    assert image == {"type": "image_url", "image_url": {"url": PICTURE}}


async def test_the_responses_api_takes_an_input_image(
    tmp_path: Path, openai_server: OpenAIServer, vision_model: Any
) -> None:
    openai_server.push(text_reply("A pixel again."))
    item = {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "and this?"},
            {"type": "input_image", "image_url": PICTURE},
        ],
    }
    async with serving(vision_model, tmp_path, sees_images=True) as served:
        got = await client_for(served).responses.create(model="default", input=[item])  # type: ignore[list-item]
    assert got.output_text == "A pixel again."
    assert last_user_content(openai_server)[1]["image_url"]["url"] == PICTURE


async def test_a_model_that_cannot_see_refuses_the_picture_with_a_400(
    tmp_path: Path, openai_server: OpenAIServer, vision_model: Any
) -> None:
    async with serving(vision_model, tmp_path, sees_images=False) as served:
        with pytest.raises(openai.BadRequestError) as caught:
            await client_for(served).chat.completions.create(model="default", messages=ASKED)
    message = caught.value.body["message"]  # type: ignore[index]
    assert message.startswith("image_url: image parts need a model that sees images")
    assert openai_server.chat_requests == []


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://example.com/cat.png", "base64 data: URL"),
        ("data:image/png;base64,not base64!", "not valid base64"),
        ("data:image/tiff;base64," + PNG, "not a type models take"),
    ],
)
async def test_an_image_seam_cannot_take_is_a_400_naming_the_part(
    tmp_path: Path, openai_server: OpenAIServer, vision_model: Any, url: str, why: str
) -> None:
    asked = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]
    async with serving(vision_model, tmp_path, sees_images=True) as served:
        with pytest.raises(openai.BadRequestError) as caught:
            await client_for(served).chat.completions.create(model="default", messages=asked)  # type: ignore[arg-type]
    message = caught.value.body["message"]  # type: ignore[index]
    assert message.startswith("messages[0].content[0]: ") and why in message
    assert openai_server.chat_requests == []


class Registry:
    default_id = "default"

    def __init__(self, *people: Personality) -> None:
        self._by_id = {p.id: p for p in people}

    def get(self, personality_id: str) -> Personality:
        return self._by_id[personality_id]

    def list(self) -> list[Personality]:
        return list(self._by_id.values())


def test_the_vision_check_reads_each_personality_s_model(tmp_path: Path) -> None:
    people = Registry(
        Personality("default", ""),
        Personality("claude", "", model="anthropic:claude-sonnet-4-5"),
        Personality("small", "", model="openai:gpt-3.5-turbo"),
        Personality("offline", "", model="local"),
    )
    seeing = load_settings({"OPENAI_API_KEY": "k", "SEAM_MODEL": "gpt-4o"}, home=tmp_path)
    check = vision_check(seeing, people)
    assert [p.id for p in people.list() if check(p.id)] == ["default", "claude"]
    blind = load_settings({"OPENAI_API_KEY": "k", "SEAM_MODEL": "gpt-3.5-turbo"}, home=tmp_path)
    assert not vision_check(blind, people)("default")
