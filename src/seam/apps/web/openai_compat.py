"""`/v1/models` and `/v1/chat/completions` in the OpenAI wire format, so any OpenAI client
drives Seam.

Personalities are the models. Without `X-Seam-Session` the request's `messages` are the
whole conversation: they are loaded into a throwaway session, the last user message is
its turn, and the session is deleted afterwards. With `X-Seam-Session: NAME` the last user
message is a durable turn in session NAME (created if new); earlier messages are ignored,
since the session has its own history.

Tools are the server's: the personality's own tools run on the server, and the client sees
only the answer's text (no `tool_calls`, which would ask the client to run them). A request
carrying client-side tools (`tools`, `functions`, or `tool`/`function` messages and
assistant `tool_calls` in its history) is refused with a 400 saying so, rather than
answered as if the model had seen tools it never got. A command that needs approval in the
personality's `approval_mode` is answered "nobody is there to approve" at once in a
stateless request (the gate refuses it; the model is told no one could approve, not that
the person said no), and the reply ends with a note naming the command and how to run it
in a named session. In a named session it waits, as in the page, for
`POST /api/sessions/NAME/approvals/{call_id}` (its `tool_approval_required` event is on
`/api/sessions/NAME/events`), from any process, until the approval timeout denies it.
"""

import json
import secrets
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from seam.apps.web.auth import Principal
from seam.apps.web.backend import WebBackend
from seam.apps.web.errors import ApiError
from seam.apps.web.transcript import transcript_messages
from seam.contracts.events import AgentEvent, Done, TextDelta, ToolApprovalRequired

FINISH = {"stop": "stop", "length": "length", "max_iterations": "length"}


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, max_length=100)
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=10_000)
    stream: bool = False
    stream_options: dict[str, Any] | None = None


def router(
    backend: WebBackend, authenticate: Callable[[Request], Awaitable[Principal]]
) -> APIRouter:
    """The /v1 routes; `authenticate` is the app's dependency that names the caller."""
    api = APIRouter(prefix="/v1", tags=["openai"])
    Who = Annotated[Principal, Depends(authenticate)]

    @api.get("/models")
    async def models(_: Who) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {"id": p["id"], "object": "model", "created": 0, "owned_by": "seam"}
                for p in backend.personalities()
            ],
        }

    @api.post("/chat/completions", response_model=None)
    async def chat(
        principal: Who,
        body: ChatRequest,
        x_seam_session: Annotated[str | None, Header()] = None,
    ) -> JSONResponse | StreamingResponse:
        turn = await _Turn.start(backend, principal.tenant, body, x_seam_session)
        if body.stream:
            usage_wanted = bool((body.stream_options or {}).get("include_usage"))
            return StreamingResponse(
                _chunks(turn.events(), turn.frame, usage_wanted, turn.note),
                media_type="text/event-stream",
            )
        return JSONResponse(await turn.answer())

    return api


@dataclass
class _Turn:
    """One completion request's turn: the session it runs in (a throwaway one for a
    stateless request, deleted when the turn ends), its submission and its events."""

    backend: WebBackend
    tenant: str
    name: str
    stateless: bool
    submission_id: str
    model: str
    stream: AsyncGenerator[AgentEvent | None, None]
    created: int = field(default_factory=lambda: int(time.time()))
    unattended: list[str] = field(default_factory=list)  # refused: nobody to approve them

    @classmethod
    async def start(
        cls, backend: WebBackend, tenant: str, body: ChatRequest, session: str | None
    ) -> "_Turn":
        """Check the request, load its history (stateless) and post its last message."""
        try:
            backend.check_personality(body.model)
        except LookupError:
            raise ApiError(
                404,
                f"the model {body.model!r} does not exist "
                "(models are personalities: GET /v1/models)",
                "invalid_request_error",
            ) from None
        _refuse_client_tools(body)
        history = transcript_messages(body.messages)
        if not history or history[-1].role != "user" or not history[-1].content.strip():
            raise ApiError(400, "the last message must be a user message with text")
        name = session or f"openai-{secrets.token_hex(6)}"
        if session is None:
            await backend.create_session(tenant, name, body.model)
            await backend.load_history(tenant, name, history[:-1])
        after = await backend.last_seq(tenant, name)
        sub = await backend.post_message(tenant, name, history[-1].content, personality=body.model)
        stream = backend.events(tenant, name, after)
        return cls(backend, tenant, name, session is None, sub.id, body.model, stream)

    def note(self) -> str:
        return _unattended_note(self.unattended)

    def frame(self, choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        """A `chat.completion.chunk` of this completion."""
        return {
            "id": f"chatcmpl-{self.submission_id}",
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": choices,
            **extra,
        }

    async def events(self) -> AsyncIterator[AgentEvent]:
        """This submission's events, ending with its `done`."""
        backend, stream = self.backend, self.stream
        try:
            async for event in stream:
                if event is None:
                    continue
                if self.stateless and isinstance(event, ToolApprovalRequired):
                    self.unattended.append(event.command)
                    await backend.respond_unattended(self.tenant, self.name, event.call_id)
                yield event
                if isinstance(event, Done) and await backend.settled(self.submission_id):
                    return
        finally:
            await stream.aclose()
            if self.stateless:
                await backend.delete_session(self.tenant, self.name)

    async def answer(self) -> dict[str, Any]:
        """The whole turn as one `chat.completion` (a 502 if it failed)."""
        done: Done | None = None
        async for event in self.events():
            if isinstance(event, Done):
                done = event
        settled = await self.backend.submission(self.submission_id)
        if done is None or (settled is not None and settled.outcome == "failed"):
            message = (settled.error if settled else None) or "the turn failed"
            raise ApiError(502, message, "upstream_error")
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": done.text + self.note()},
            "finish_reason": FINISH.get(done.finish_reason, "stop"),
            "logprobs": None,
        }
        return self.frame([choice], object="chat.completion", usage=_usage(done))


def _refuse_client_tools(body: ChatRequest) -> None:
    """A 400 for client-side tools: Seam cannot hand the model tools the client runs."""
    extra = body.model_extra or {}
    found = [name for name in ("tools", "functions") if extra.get(name)]
    for message in body.messages:
        if message.get("role") in ("tool", "function"):
            found.append(f"a {message['role']!r} message")
        elif message.get("tool_calls") or message.get("function_call"):
            found.append("assistant tool_calls")
    if found:
        raise ApiError(
            400,
            f"client-side tools are not supported (this request has {', '.join(found)}): "
            "Seam runs the personality's own tools on the server and returns only the "
            "answer's text; leave the tools out",
            "invalid_request_error",
        )


def _unattended_note(commands: list[str]) -> str:
    """What ends a stateless reply whose commands needed an approval nobody could give."""
    if not commands:
        return ""
    listed = ", ".join(f"`{c}`" for c in commands)
    return (
        f"\n\n[Seam: {listed} needed approval and was not run: a request without an "
        "X-Seam-Session header has no one to ask. Send it with X-Seam-Session: NAME and "
        "answer at POST /api/sessions/NAME/approvals/{call_id}.]"
    )


def _usage(done: Done) -> dict[str, int]:
    u = done.usage
    return {
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.input_tokens + u.output_tokens,
    }


async def _chunks(
    events: AsyncIterator[AgentEvent],
    frame: Callable[..., dict[str, Any]],
    usage_wanted: bool,
    note: Callable[[], str],
) -> AsyncIterator[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return _sse(frame([choice]))

    yield chunk({"role": "assistant", "content": ""})
    done: Done | None = None
    async for event in events:
        if isinstance(event, TextDelta) and event.text:
            yield chunk({"content": event.text})
        elif isinstance(event, Done):
            done = event
    if note():
        yield chunk({"content": note()})
    finish = FINISH.get(done.finish_reason, "stop") if done is not None else "stop"
    yield chunk({}, finish)
    if usage_wanted and done is not None:
        yield _sse(frame([], usage=_usage(done)))
    yield b"data: [DONE]\n\n"


def _sse(body: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\n\n"
