"""Every request field is honoured, ignored or refused with a 400 naming it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from seam.core import ScriptedModel
from seam.core.scripted_model import Step, text_step
from tests.openai_api.support import WEATHER, client_for
from tests.web.harness import serving

HI = [{"role": "user", "content": "hi"}]

REFUSED_CHAT: list[tuple[str, Any]] = [
    ("n", 2),
    ("top_p", 0.5),
    ("seed", 7),
    ("frequency_penalty", 0.5),
    ("presence_penalty", 1),
    ("logit_bias", {"50256": -100}),
    ("logprobs", True),
    ("top_logprobs", 2),
    ("parallel_tool_calls", False),
    ("audio", {"voice": "alloy", "format": "wav"}),
    ("modalities", ["text", "audio"]),
    ("functions", [{"name": "f", "parameters": {}}]),
    ("reasoning_effort", "high"),
    ("no_such_field", 1),
    ("max_tokens", 0),
    ("temperature", 3),
    ("stop", ["a", "b", "c", "d", "e"]),
    ("tool_choice", "sometimes"),
]


@pytest.mark.parametrize(("field", "value"), REFUSED_CHAT)
async def test_a_chat_field_seam_cannot_honour_is_a_400_naming_it(
    tmp_path: Path, field: str, value: Any
) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served:
        with pytest.raises(openai.BadRequestError) as caught:
            await client_for(served).chat.completions.create(
                model="default",
                messages=HI,
                extra_body={field: value},  # type: ignore[arg-type]
            )
        assert caught.value.body["message"].startswith(f"{field}: ")  # type: ignore[index]


REFUSED_BODIES: list[tuple[str, dict[str, Any]]] = [
    (
        "messages[0].content[1]",
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "what is this?"},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
                    ],
                }
            ]
        },
    ),
    (
        "tools[0].function.name",
        {
            "messages": HI,
            "tools": [{"type": "function", "function": {"name": "echo", "parameters": {}}}],
        },
    ),
    ("tools[0].type", {"messages": HI, "tools": [{"type": "web_search"}]}),
    ("response_format.type", {"messages": HI, "response_format": {"type": "xml"}}),
    ("messages", {"messages": [{"role": "assistant", "content": "hi"}]}),
]


@pytest.mark.parametrize(("field", "body"), REFUSED_BODIES)
async def test_refused_parts_of_a_body_are_named(
    tmp_path: Path, field: str, body: dict[str, Any]
) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as native:
        got = await native.post("/v1/chat/completions", json={"model": "default", **body})
        assert got.status_code == 400, got.text
        assert got.json()["error"]["message"].startswith(f"{field}: "), got.text


REFUSED_RESPONSES: list[tuple[str, dict[str, Any]]] = [
    ("previous_response_id", {"previous_response_id": "resp_1"}),
    ("top_p", {"top_p": 0.1}),
    ("background", {"background": True}),
    ("include", {"include": ["reasoning.encrypted_content"]}),
    (
        "input[0].content[0]",
        {
            "input": [
                {
                    "role": "user",
                    "content": [{"type": "input_image", "image_url": "data:image/png;base64,AA"}],
                }
            ]
        },
    ),
    ("input[0].type", {"input": [{"type": "item_reference", "id": "x"}]}),
    ("max_output_tokens", {"max_output_tokens": -1}),
]


@pytest.mark.parametrize(("field", "extra"), REFUSED_RESPONSES)
async def test_a_responses_field_seam_cannot_honour_is_a_400_naming_it(
    tmp_path: Path, field: str, extra: dict[str, Any]
) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as native:
        body = {"model": "default", "input": "hi", **extra}
        got = await native.post("/v1/responses", json=body)
        assert got.status_code == 400, got.text
        assert got.json()["error"]["message"].startswith(f"{field}: "), got.text


async def test_honoured_fields_reach_the_model_and_harmless_ones_are_ignored(
    tmp_path: Path,
) -> None:
    model = ScriptedModel([text_step("ok"), text_step("ok"), text_step("ok")])
    async with serving(model, tmp_path) as served:
        client = client_for(served)
        await client.chat.completions.create(
            model="default",
            messages=HI,  # type: ignore[arg-type]
            max_completion_tokens=50,
            temperature=0.2,
            n=1,
            top_p=1,
            user="someone",
            metadata={"k": "v"},
            store=False,
            tools=[WEATHER],  # type: ignore[list-item]
            tool_choice={"type": "function", "function": {"name": "weather"}},
        )
        await client.chat.completions.create(
            model="default",
            messages=HI,
            max_tokens=7,  # type: ignore[arg-type]
        )
        await client.responses.create(model="default", input="hi", max_output_tokens=9)
    first, second, third = model.requests
    assert (first.max_tokens, first.temperature, first.tool_choice) == (50, 0.2, "weather")
    assert (second.max_tokens, second.temperature, second.tool_choice) == (7, None, "auto")
    assert third.max_tokens == 9


@pytest.mark.parametrize("stream", [False, True])
async def test_stop_cuts_the_answer_before_the_sequence(tmp_path: Path, stream: bool) -> None:
    model = ScriptedModel([Step(deltas=["one, tw", "o, END three", " four"])])
    async with serving(model, tmp_path) as served:
        client = client_for(served)
        if stream:
            chunks = [
                c
                async for c in await client.chat.completions.create(
                    model="default",
                    messages=HI,
                    stop=["END", "xyz"],
                    stream=True,  # type: ignore[arg-type]
                )
            ]
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            finish = chunks[-1].choices[0].finish_reason
        else:
            answer = await client.chat.completions.create(
                model="default",
                messages=HI,
                stop="END",  # type: ignore[arg-type]
            )
            text, finish = answer.choices[0].message.content or "", answer.choices[0].finish_reason
        assert (text, finish) == ("one, two, ", "stop")


SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "degrees": {"type": "integer"}},
    "required": ["city", "degrees"],
}
JSON_SCHEMA = {"type": "json_schema", "json_schema": {"name": "weather", "schema": SCHEMA}}


async def test_response_format_asks_for_the_schema_and_checks_the_answer(
    tmp_path: Path,
) -> None:
    model = ScriptedModel(
        [
            text_step('```json\n{"city": "Oslo", "degrees": 21}\n```'),
            text_step('{"city": "Oslo"}'),
            text_step("sunny"),
        ]
    )
    async with serving(model, tmp_path) as served:
        client = client_for(served)
        good = await client.chat.completions.create(
            model="default",
            messages=HI,
            response_format=JSON_SCHEMA,  # type: ignore[arg-type]
        )
        assert good.choices[0].message.content == '{"city": "Oslo", "degrees": 21}'
        assert '"degrees"' in model.requests[0].system  # the model was given the schema
        with pytest.raises(openai.InternalServerError) as caught:
            await client.chat.completions.create(
                model="default",
                messages=HI,
                response_format=JSON_SCHEMA,  # type: ignore[arg-type]
            )
        assert "response_format: the answer does not match the schema" in str(caught.value)
        assert "'degrees' is a required property" in str(caught.value)
        with pytest.raises(openai.APIError) as streamed:
            async for _ in await client.chat.completions.create(
                model="default",
                messages=HI,  # type: ignore[arg-type]
                response_format={"type": "json_object"},
                stream=True,
            ):
                pass
        assert "response_format: the answer is not JSON" in str(streamed.value)


async def test_models_by_id(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served:
        client = client_for(served)
        model = await client.models.retrieve("default")
        assert (model.id, model.object, model.owned_by) == ("default", "model", "seam")
        with pytest.raises(openai.NotFoundError) as caught:
            await client.models.retrieve("gpt-nothing")
        assert "gpt-nothing" in str(caught.value)
        async with httpx.AsyncClient(base_url=served.url) as anonymous:
            assert (await anonymous.get("/v1/models/default")).status_code == 401
