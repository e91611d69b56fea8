"""Session titles: a short name for a conversation after its first exchange.

`seam sessions list` and `/sessions` show a title beside each session's name, so a
person can find last week's conversation about the boiler without opening each one.
After a turn ends (`agent_done`) a session without a title gets one:

- with a `titles` side model configured, a background task asks it for a few words
  (falling back to the heuristic when it fails or says nothing usable);
- otherwise (the offline default) the first user message, cut to a few words. No model
  is called, so a small local model never slows the reply down.

Titles are unique across sessions (the store says so), so a taken one becomes "X #2"
(numbered by the store as it writes it). The reply is never held up: the heuristic is
one store write, a model title is a task that `aclose` cancels (or `drain` waits for).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field

from seam.contracts import hooks
from seam.contracts.hooks import AgentDone, HookRegistry
from seam.contracts.messages import Message
from seam.contracts.model import ModelProvider, ModelRequest
from seam.contracts.sessions import SessionNotFound, SessionStore
from seam.plugins.hooks.background import BackgroundTasks, side_model_text

log = logging.getLogger("seam.titles")

TITLE_CHARS = 48
TITLE_PROMPT = (
    "Write a title of at most six words for the conversation below, in its language. "
    "Reply with the title alone: no quotes, no full stop."
)
EXCHANGE_CHARS = 2_000
_TRIM = " \t\"'`“”\u2018\u2019«».,;:!?-—"


def heuristic_title(text: str, limit: int = TITLE_CHARS) -> str:
    """The first line of `text` folded and cut at a word boundary to `limit` chars
    (an ellipsis marks a cut); "" when nothing usable is left."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    line = " ".join(line.split()).strip(_TRIM)
    if not line:
        return ""
    if len(line) > limit:
        cut = line[: limit - 1]
        space = cut.rfind(" ")
        if space >= limit // 2:
            cut = cut[:space]
        line = cut.rstrip(_TRIM) + "…"
    return line[0].upper() + line[1:]


def clean_title(reply: str) -> str:
    """A model's reply as a title: its first line, a `Title:` prefix and quotes dropped."""
    line = next((ln for ln in reply.splitlines() if ln.strip()), "")
    line = re.sub(r"^\s*(title\s*:)\s*", "", line, flags=re.IGNORECASE)
    return heuristic_title(line)


@dataclass(eq=False)
class TitleHook:
    """Gives each untitled session a title when a turn of it ends."""

    sessions: SessionStore
    _: KW_ONLY
    # None: the heuristic only (no model call at all).
    model: ModelProvider | None = None
    # Sessions never titled (subagents' `task:` sessions, which listings leave out).
    skip: Callable[[str], bool] = lambda key: False
    timeout: float = 30.0
    _titled: set[str] = field(default_factory=set, init=False)
    _tasks: BackgroundTasks[str | None] = field(default_factory=BackgroundTasks, init=False)

    def register(self, registry: HookRegistry) -> None:
        registry.on_void(hooks.AGENT_DONE, self.after_turn)

    async def after_turn(self, payload: AgentDone) -> None:
        key = payload.session_key
        if key in self._titled or self.skip(key):
            return
        first = next((m.content for m in payload.messages if m.role == "user"), "")
        if not first.strip():
            return
        self._titled.add(key)
        if self.model is None:
            await self.give(key, heuristic_title(first))  # one write, no read first
            return
        info = await self.sessions.get(key)
        if info is None or info.title:
            return
        messages = tuple(payload.messages)
        self._tasks.start(self._from_model(key, first, messages), name=f"title {key}")

    async def _from_model(self, key: str, first: str, messages: Sequence[Message]) -> str | None:
        title = ""
        try:
            async with asyncio.timeout(self.timeout):
                title = clean_title(await self._ask(messages))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("the titles model failed; using the first message", exc_info=True)
        return await self.give(key, title or heuristic_title(first))

    async def give(self, key: str, title: str) -> str | None:
        """Set `title` (numbered when taken) unless the session has one by then. The store
        picks the number in the write that sets it, so sessions titled alike at once
        (a thousand first messages saying "hi") never race for a number."""
        if not title:
            return None
        try:
            return await self.sessions.set_next_title(key, title)
        except SessionNotFound:
            return None
        except Exception:
            log.warning("could not title %s", key, exc_info=True)
            return None

    async def _ask(self, messages: Sequence[Message]) -> str:
        assert self.model is not None
        lines = [
            f"[{m.role}] {m.content.strip()}"
            for m in messages
            if m.role in ("user", "assistant") and m.content.strip()
        ]
        exchange = "\n".join(lines)[:EXCHANGE_CHARS]
        request = ModelRequest(
            system=TITLE_PROMPT,
            messages=(Message("user", exchange),),
            tool_choice="none",
            max_tokens=24,
            temperature=0.0,
        )
        return await side_model_text(self.model, request)

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def drain(self) -> None:
        """Wait for every title being asked for."""
        await self._tasks.drain()

    async def aclose(self) -> None:
        await self._tasks.aclose()
