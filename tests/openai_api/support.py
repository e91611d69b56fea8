"""What the OpenAI API tests share: a client of the served app, a client tool, and the
model step that answers with what a tool returned."""

from __future__ import annotations

from typing import Any

import openai

from seam.contracts.model import ModelRequest
from seam.core.scripted_model import Step, text_step
from tests.web.harness import Served

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "today's weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def client_for(served: Served, tenant: str = "local") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=f"{served.url}/v1", api_key=served.keys[tenant], max_retries=0
    )


def says_result(request: ModelRequest) -> Step:
    """Answers with what the last tool returned, so the text proves the round trip."""
    return text_step(f"The tool said: {request.messages[-1].content}")
