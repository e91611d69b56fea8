"""openai-agents doing loop_overhead's turn, for `bench/peers.py` (run by the peers
virtualenv's python, never Seam's: it imports no Seam).

A fake model answers each turn with three `echo` tool calls, then (given their results)
a 200-token answer, as `bench/loop_overhead.py`'s scripted model does; the answer comes
whole (`Runner.run`, not streamed), so the peer does less than Seam's streamed turn.
Prints `openai-agents turn mean X ms` (CPU time per turn). Run:

    ~/.cache/seam-bench/peers/bin/python bench/peer_agents.py [--turns 300]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

ANSWER = "tok " * 200


@function_tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


class FakeModel(Model):
    """Three tool calls, then (once their outputs are in) the answer."""

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        items = args[1] if len(args) > 1 else kwargs["input"]
        answered = isinstance(items, list) and any(
            (i.get("type") if isinstance(i, dict) else None) == "function_call_output"
            for i in items
        )
        if answered:
            text = ResponseOutputText(annotations=[], text=ANSWER, type="output_text")
            output: list[Any] = [
                ResponseOutputMessage(
                    id="m", content=[text], role="assistant", status="completed", type="message"
                )
            ]
        else:
            output = [
                ResponseFunctionToolCall(
                    arguments=f'{{"text": "{i}"}}',
                    call_id=f"c{i}",
                    name="echo",
                    type="function_call",
                    id=f"f{i}",
                    status="completed",
                )
                for i in range(3)
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=300)
    turns = parser.parse_args().turns
    set_tracing_disabled(True)
    agent = Agent(name="bench", instructions="Be terse.", tools=[echo], model=FakeModel())
    samples = []
    for i in range(turns + 20):
        start = time.process_time_ns()
        await Runner.run(agent, "go")
        if i >= 20:
            samples.append((time.process_time_ns() - start) / 1e6)
    print(f"openai-agents turn           mean {statistics.fmean(samples):7.3f} ms")


if __name__ == "__main__":
    asyncio.run(main())
