"""Reflection: after a turn, a short background review that may add to memory.

The agent saves what it learns with the `memory` tool when it thinks of it; this hook is
the second chance. After each turn (on `agent_done`) it asks a model, in a background
task, whether the exchange taught anything worth keeping across sessions, and adds each
proposed entry through the memory's own `add`, so the same rules hold as for the tool:
limits, duplicates, injection and secret refusal. A refused entry is logged and dropped.

The reply is never held up: the hook only starts a task. Tasks are tracked so `aclose`
can cancel them (or `drain` wait for them, in tests and at a graceful shutdown).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Protocol, runtime_checkable

from seam.contracts import hooks
from seam.contracts.hooks import AgentDone, HookRegistry
from seam.contracts.messages import Message
from seam.contracts.model import ModelProvider, ModelRequest
from seam.plugins.hooks.background import BackgroundTasks, side_model_text

log = logging.getLogger("seam.reflection")

REFLECTION_PROMPT = """\
You review one exchange between a person and an AI agent and decide what is worth \
remembering in future sessions. Keep only lasting things: facts about the person \
(preferences, context, how they like to work) and lessons or conventions the agent \
learned. Never keep secrets, one-off task details or anything already in memory.

Reply with at most {limit} lines, each either
memory: <a short entry about what was learned>
user: <a short entry about the person>
or reply exactly NONE."""
MESSAGE_CHARS = 1_500
TRANSCRIPT_CHARS = 8_000
TARGETS = ("memory", "user")


@runtime_checkable
class MemoryWriter(Protocol):
    """What reflection needs of a memory (MarkdownMemory is one)."""

    def add(self, target: Any, content: str) -> object:
        """Raises ValueError (MemoryEntryError) when the entry is refused."""
        ...

    def snapshot(self) -> str | None: ...


@dataclass(eq=False)
class ReflectionHook:
    # Wiring hands a side model that is built on first use (`LazyModel`).
    model: ModelProvider
    memory: MemoryWriter
    _: KW_ONLY
    max_entries: int = 3
    timeout: float = 60.0
    _tasks: BackgroundTasks[list[str]] = field(default_factory=BackgroundTasks, init=False)

    def register(self, registry: HookRegistry) -> None:
        registry.on_void(hooks.AGENT_DONE, self.after_turn)

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def after_turn(self, payload: AgentDone) -> None:
        messages = tuple(payload.messages)
        if not any(m.role == "user" for m in messages):
            return
        key = payload.session_key
        memory = self._memory_of(key)
        if memory is not None:
            self._tasks.start(self.reflect(messages, memory), name=f"reflection {key}")

    def _memory_of(self, session_key: str) -> MemoryWriter | None:
        """The memory of the session's tenant: a memory that keeps one per tenant says
        which (`for_session`), so a tenant's exchange never lands in the owner's memory.
        None when that memory takes no entries."""
        route = getattr(self.memory, "for_session", None)
        memory = self.memory if route is None else route(session_key)
        return memory if isinstance(memory, MemoryWriter) else None

    async def reflect(
        self, messages: Sequence[Message], memory: MemoryWriter | None = None
    ) -> list[str]:
        """Review `messages`; returns the entries added to `memory` (the hook's own when
        not given) as `target: entry`."""
        memory = self.memory if memory is None else memory
        try:
            async with asyncio.timeout(self.timeout):
                reply = await self._ask(messages, memory)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("reflection failed; memory is unchanged", exc_info=True)
            return []
        added: list[str] = []
        for target, entry in parse_proposals(reply, self.max_entries):
            try:
                memory.add(target, entry)
            except ValueError as exc:  # the memory's rules refused it
                log.info("reflection entry refused: %s", exc)
                continue
            added.append(f"{target}: {entry}")
        if added:
            log.info("reflection added %d memory entries", len(added))
        return added

    async def _ask(self, messages: Sequence[Message], memory: MemoryWriter) -> str:
        known = memory.snapshot() or "(memory is empty)"
        request = ModelRequest(
            system=REFLECTION_PROMPT.format(limit=self.max_entries),
            messages=(
                Message(
                    "user",
                    f"Current memory:\n{known}\n\nThe exchange:\n{render_exchange(messages)}",
                ),
            ),
            tool_choice="none",
            max_tokens=300,
            temperature=0.0,
        )
        return await side_model_text(self.model, request)

    async def drain(self) -> None:
        """Wait for every running review."""
        await self._tasks.drain()

    async def aclose(self) -> None:
        """Cancel running reviews (a half-done review writes nothing)."""
        await self._tasks.aclose()


def parse_proposals(reply: str, limit: int) -> list[tuple[str, str]]:
    """`memory: ...` / `user: ...` lines of a reply; anything else is ignored."""
    found: list[tuple[str, str]] = []
    for line in reply.splitlines():
        target, sep, entry = line.strip().lstrip("-* ").partition(":")
        target = target.strip().lower()
        entry = entry.strip()
        if sep and target in TARGETS and entry:
            found.append((target, entry))
            if len(found) >= limit:
                break
    return found


def render_exchange(messages: Sequence[Message]) -> str:
    """The person's and the agent's words (tool calls named, tool output left out)."""
    lines: list[str] = []
    for message in messages:
        if message.role in ("user", "assistant") and message.content.strip():
            text = message.content.strip()
            if len(text) > MESSAGE_CHARS:
                text = text[:MESSAGE_CHARS] + " […]"
            lines.append(f"[{message.role}] {text}")
        if message.tool_calls:
            lines.append(f"[agent used: {', '.join(c.name for c in message.tool_calls)}]")
    text = "\n".join(lines)
    return text if len(text) <= TRANSCRIPT_CHARS else "[…]\n" + text[-TRANSCRIPT_CHARS:]
