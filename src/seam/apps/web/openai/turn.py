"""One OpenAI-style request's turn, whichever API asked (chat completions or responses).

Without `X-Seam-Session` the request's messages are the whole conversation: they are
loaded into a throwaway session, deleted when the turn ends. With `X-Seam-Session: NAME`
the turn is durable in session NAME (created if new) and only the request's last message
(or its trailing tool results) is new: the session has its own history.

A request that ends with `tool` results continues a turn that stopped at the client's
tool calls: the results are appended to the transcript and the model is called again
(`TurnExtras.resume`). In a named session they must answer the calls the session is
waiting on. A command that needs approval is answered "nobody is there to approve" at
once in a stateless request (the reply ends with a note saying so); in a named session
it waits for `POST /api/sessions/NAME/approvals/{call_id}`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field, replace

from seam.apps.web.backend import WebBackend
from seam.apps.web.errors import ApiError
from seam.apps.web.openai.answer import AnswerFormat
from seam.apps.web.openai.messages import refuse, trailing_results
from seam.contracts.events import AgentEvent, Done, ErrorEvent, ToolApprovalRequired
from seam.contracts.messages import EMPTY_USAGE, Message, ToolCall, Usage
from seam.contracts.turn_extras import NO_EXTRAS, TurnExtras, unanswered_calls

# Seam's finish reasons in OpenAI's words.
FINISH = {
    "stop": "stop",
    "length": "length",
    "max_iterations": "length",
    "tool_calls": "tool_calls",
}
RESUMED_INPUT = "(tool results)"  # the submission's input when it continues from results


@dataclass(frozen=True, slots=True)
class Asked:
    """A request as both APIs reduce it: the model, the conversation, the turn's extras
    (the client's tools, sampling, the format note) and what is done to the answer."""

    model: str
    history: list[Message]
    stream: bool = False
    extras: TurnExtras = NO_EXTRAS
    stops: tuple[str, ...] = ()
    format: AnswerFormat | None = None
    usage_wanted: bool = False


@dataclass(slots=True)
class Outcome:
    """How the turn ended: its text, finish reason (OpenAI's), usage, the calls the
    client is to run, and the error of a failed turn."""

    text: str = ""
    finish: str = "stop"
    usage: Usage = EMPTY_USAGE
    calls: list[ToolCall] = field(default_factory=list)
    error: str | None = None


@dataclass
class OpenAITurn:
    """The submission of one request and its events (see the module docstring)."""

    backend: WebBackend
    tenant: str
    name: str
    stateless: bool
    submission_id: str
    asked: Asked
    stream: AsyncGenerator[AgentEvent | None, None]
    created: int = field(default_factory=lambda: int(time.time()))
    unattended: list[str] = field(default_factory=list)  # refused: nobody to approve them
    outcome: Outcome = field(default_factory=Outcome)

    @classmethod
    async def start(
        cls, backend: WebBackend, tenant: str, asked: Asked, session: str | None
    ) -> OpenAITurn:
        """Check the request, load its history (stateless) and post its new input."""
        _check_model(backend, asked.model)
        history, extras = asked.history, asked.extras
        results = trailing_results(history)
        text = RESUMED_INPUT
        if results:
            extras = replace(extras, resume=True)
        elif history and history[-1].role == "user" and history[-1].content.strip():
            text = history[-1].content
            extras = _with_images(backend, asked.model, history, extras)
        else:
            raise refuse(
                "messages", "the last message must be a user message with text or tool results"
            )
        name = session or f"openai-{secrets.token_hex(6)}"
        if session is None:
            await backend.create_session(tenant, name, asked.model)
            await backend.load_history(tenant, name, history if results else history[:-1])
        elif results:
            await _continue_named(backend, tenant, name, results)
        after = await backend.last_seq(tenant, name)
        sub = await backend.post_message(tenant, name, text, personality=asked.model, extras=extras)
        stream = backend.events(tenant, name, after)
        return cls(backend, tenant, name, session is None, sub.id, asked, stream)

    async def events(self) -> AsyncIterator[AgentEvent | None]:
        """This submission's events, ending with its `done` (None: a heartbeat, for a
        stream's keep-alive); `outcome` holds how it ended."""
        backend, stream = self.backend, self.stream
        try:
            async for event in stream:
                if self.stateless and isinstance(event, ToolApprovalRequired):
                    self.unattended.append(event.command)
                    await backend.respond_unattended(self.tenant, self.name, event.call_id)
                if isinstance(event, ErrorEvent):
                    self.outcome.error = f"{event.kind}: {event.message}"
                if isinstance(event, Done) and await backend.settled(self.submission_id):
                    await self._settle(event)
                    yield event
                    return
                yield event
            self.outcome.error = "the turn ended without an answer"
        finally:
            await stream.aclose()
            if self.stateless:
                await backend.delete_session(self.tenant, self.name)

    async def _settle(self, done: Done) -> None:
        sub = await self.backend.submission(self.submission_id)
        out = self.outcome
        out.text, out.usage = done.text, done.usage
        out.finish = FINISH.get(done.finish_reason, "stop")
        if (sub is not None and sub.outcome == "failed") or done.finish_reason == "error":
            out.error = out.error or (sub.error if sub else None) or "the turn failed"
        else:
            out.error = None  # an error the turn recovered from (a retry) is no failure
        if out.finish == "tool_calls":
            key = self.backend.key_for(self.tenant, self.name)
            pending = unanswered_calls(await self.backend.runtime.sessions.messages(key))
            names = self.asked.extras.external_names
            out.calls = [c for c in pending if c.name in names]

    def note(self) -> str:
        """What ends a stateless reply whose commands needed an approval nobody could give."""
        if not self.unattended:
            return ""
        listed = ", ".join(f"`{c}`" for c in self.unattended)
        return (
            f"\n\n[Seam: {listed} needed approval and was not run: a request without an "
            "X-Seam-Session header has no one to ask. Send it with X-Seam-Session: NAME and "
            "answer at POST /api/sessions/NAME/approvals/{call_id}.]"
        )


def _with_images(
    backend: WebBackend, model: str, history: list[Message], extras: TurnExtras
) -> TurnExtras:
    """The new message's images go with the turn to a model that sees them; for one
    that does not, the request is a 400 naming the message (older messages' images are
    their placeholder lines only: a client re-sends its history with each request)."""
    images = history[-1].images
    if not images:
        return extras
    if not backend.sees_images(model):
        raise refuse(
            "image_url", f"image parts need a model that sees images; {model!r} takes text only"
        )
    return replace(extras, images=images)


def _check_model(backend: WebBackend, model: str) -> None:
    try:
        backend.check_personality(model)
    except LookupError:
        raise ApiError(
            404,
            f"the model {model!r} does not exist (models are personalities: GET /v1/models)",
            "invalid_request_error",
        ) from None


async def _continue_named(
    backend: WebBackend, tenant: str, name: str, results: list[Message]
) -> None:
    """Append the client's results to the named session, which must be waiting on them."""
    key = await backend.existing_key(tenant, name)
    waiting = {c.id: c.name for c in unanswered_calls(await backend.runtime.sessions.messages(key))}
    for result in results:
        if result.tool_call_id not in waiting:
            raise refuse(
                "messages",
                f"the tool result for {result.tool_call_id!r} answers no call the session "
                f"{name!r} is waiting on",
            )
    named = [replace(r, name=r.name or waiting[r.tool_call_id or ""]) for r in results]
    await backend.load_history(tenant, name, named)


__all__ = ["FINISH", "Asked", "OpenAITurn", "Outcome"]
