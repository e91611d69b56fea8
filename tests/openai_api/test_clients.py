"""Third-party OpenAI clients drive a client-side tool round trip against `seam serve`
on loopback: LiteLLM, LangChain's `ChatOpenAI` and the OpenAI Agents SDK (over chat
completions and over responses). The model is scripted; the clients are real."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from seam.core import ScriptedModel
from seam.core.scripted_model import call, tool_step
from tests.openai_api.support import WEATHER, says_result
from tests.web.harness import serving

# LiteLLM reads its model price list from the network unless told to use its own copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def weather_model() -> ScriptedModel:
    return ScriptedModel([tool_step(call("weather", city="Oslo")), says_result])


async def test_litellm(tmp_path: Path) -> None:
    import litellm

    async with serving(weather_model(), tmp_path) as served:
        where = {"api_base": f"{served.url}/v1", "api_key": served.keys["local"]}
        messages: list[dict[str, Any]] = [{"role": "user", "content": "weather in Oslo?"}]
        first = await litellm.acompletion(
            model="openai/default", messages=messages, tools=[WEATHER], **where
        )
        choice = first.choices[0]
        assert choice.finish_reason == "tool_calls"
        (asked,) = choice.message.tool_calls
        assert json.loads(asked.function.arguments) == {"city": "Oslo"}
        messages += [
            choice.message.model_dump(),
            {"role": "tool", "tool_call_id": asked.id, "content": "sunny"},
        ]
        final = await litellm.acompletion(
            model="openai/default", messages=messages, tools=[WEATHER], stream=True, **where
        )
        text = "".join([c.choices[0].delta.content or "" async for c in final])
        assert text == "The tool said: sunny"


async def test_langchain_chat_openai(tmp_path: Path) -> None:
    from langchain_core.messages import HumanMessage, ToolMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    @tool
    def weather(city: str) -> str:
        """Today's weather in a city."""
        return f"sunny in {city}"

    async with serving(weather_model(), tmp_path) as served:
        chat = ChatOpenAI(
            model="default",
            base_url=f"{served.url}/v1",
            api_key=served.keys["local"],  # type: ignore[arg-type]
            max_retries=0,
        ).bind_tools([weather])
        messages: list[Any] = [HumanMessage("weather in Oslo?")]
        first = await chat.ainvoke(messages)
        (asked,) = first.tool_calls  # type: ignore[attr-defined]
        assert (asked["name"], asked["args"]) == ("weather", {"city": "Oslo"})
        result = weather.invoke(asked["args"])
        messages += [first, ToolMessage(result, tool_call_id=asked["id"])]
        final = await chat.ainvoke(messages)
        assert final.content == "The tool said: sunny in Oslo"


@pytest.mark.parametrize("api", ["chat_completions", "responses"])
async def test_openai_agents_sdk(tmp_path: Path, api: str) -> None:
    import agents
    import openai

    agents.set_tracing_disabled(True)
    ran: list[str] = []

    @agents.function_tool
    def weather(city: str) -> str:
        """Today's weather in a city."""
        ran.append(city)
        return f"sunny in {city}"

    model = weather_model()
    async with serving(model, tmp_path) as served:
        client = openai.AsyncOpenAI(
            base_url=f"{served.url}/v1", api_key=served.keys["local"], max_retries=0
        )
        agent = agents.Agent(
            name="helper",
            instructions="Answer about the weather.",
            tools=[weather],
            model=_agents_model(agents, client, api),
        )
        result = await agents.Runner.run(agent, "weather in Oslo?")
        assert ran == ["Oslo"]
        assert result.final_output == "The tool said: sunny in Oslo"
        model.add(tool_step(call("weather", city="Oslo")), says_result)
        streamed = agents.Runner.run_streamed(agent, "weather in Oslo?")
        async for _ in streamed.stream_events():
            pass
        assert ran == ["Oslo", "Oslo"]
        assert streamed.final_output == "The tool said: sunny in Oslo"


def _agents_model(agents: Any, client: Any, api: str) -> Any:
    if api == "responses":
        return agents.OpenAIResponsesModel(model="default", openai_client=client)
    return agents.OpenAIChatCompletionsModel(model="default", openai_client=client)
