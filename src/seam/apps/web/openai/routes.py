"""The `/v1` routes: models, chat completions and responses in OpenAI's wire format.

Personalities are the models. A request body is read as plain JSON and checked here
(`chat_request.py`, `responses_request.py`), so a field Seam does not honour is a 400
naming it, never a 422 or a silent drop. `X-Seam-Session: NAME` makes the turn durable
in session NAME (`turn.py`).
"""

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Header, Request
from fastapi.responses import JSONResponse, StreamingResponse

from seam.apps.web.auth import Principal
from seam.apps.web.backend import WebBackend
from seam.apps.web.errors import ApiError
from seam.apps.web.openai.chat import chunks, completion
from seam.apps.web.openai.chat_request import chat_request
from seam.apps.web.openai.responses import response, response_events
from seam.apps.web.openai.responses_request import responses_request
from seam.apps.web.openai.turn import Asked, OpenAITurn

Json = Annotated[Any, Body()]


@dataclass(frozen=True)
class Api:
    """How one API answers a turn: streamed (SSE bytes) or whole (a JSON object)."""

    stream: Callable[[OpenAITurn], AsyncIterator[bytes]]
    whole: Callable[[OpenAITurn], Awaitable[dict[str, Any]]]


CHAT = Api(chunks, completion)
RESPONSES = Api(response_events, response)
Session = Annotated[str | None, Header()]  # X-Seam-Session


def router(
    backend: WebBackend, authenticate: Callable[[Request], Awaitable[Principal]]
) -> APIRouter:
    """The /v1 routes; `authenticate` is the app's dependency that names the caller."""
    api = APIRouter(prefix="/v1", tags=["openai"])
    Who = Annotated[Principal, Depends(authenticate)]

    def model(p: dict[str, Any]) -> dict[str, Any]:
        return {"id": p["id"], "object": "model", "created": 0, "owned_by": "seam"}

    @api.get("/models")
    async def models(_: Who) -> dict[str, Any]:
        return {"object": "list", "data": [model(p) for p in backend.personalities()]}

    @api.get("/models/{model_id:path}")
    async def one_model(_: Who, model_id: str) -> dict[str, Any]:
        for p in backend.personalities():
            if p["id"] == model_id:
                return model(p)
        raise ApiError(404, f"the model {model_id!r} does not exist", "invalid_request_error")

    async def answer(asked: Asked, tenant: str, session: str | None, shape: Api) -> Any:
        turn = await OpenAITurn.start(backend, tenant, asked, session)
        if asked.stream:
            return StreamingResponse(shape.stream(turn), media_type="text/event-stream")
        return JSONResponse(await shape.whole(turn))

    @api.post("/chat/completions", response_model=None)
    async def chat(principal: Who, body: Json, x_seam_session: Session = None) -> Any:
        asked = chat_request(body, _own_tools(backend))
        return await answer(asked, principal.tenant, x_seam_session, CHAT)

    @api.post("/responses", response_model=None)
    async def responses(principal: Who, body: Json, x_seam_session: Session = None) -> Any:
        asked = responses_request(body, _own_tools(backend))
        return await answer(asked, principal.tenant, x_seam_session, RESPONSES)

    return api


def _own_tools(backend: WebBackend) -> frozenset[str]:
    """Names a client tool may not take: every tool Seam itself offers."""
    return frozenset(backend.runtime.tools.names())


__all__ = ["router"]
