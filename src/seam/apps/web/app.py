"""The FastAPI app of `seam serve`: the native API, its event streams, the page's files.

Every route but `GET /healthz` needs a principal (see `auth.py`); everything a route does
goes through `WebBackend` (`backend.py`), which holds the Runtime.
"""

import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Depends, FastAPI, Header, Query, Request, Response
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    StreamingResponse,
)
from pydantic import BaseModel, ConfigDict, Field

from seam.apps.cli.durable import submission_dict
from seam.apps.web.access import authorize
from seam.apps.web.auth import Authenticator, Principal, RateLimiter, cookie_name
from seam.apps.web.backend import WebBackend
from seam.apps.web.control import Control, add_control_routes
from seam.apps.web.errors import ApiError, install
from seam.apps.web.front import Front
from seam.apps.web.gate import AuthGate, Gate
from seam.apps.web.headers import SecurityHeaders
from seam.apps.web.images import (
    ImageIn,
    add_image_routes,
    body_limit,
    check_vision,
    decode_images,
)
from seam.apps.web.limits import BodyLimit
from seam.apps.web.streams import EventStreamResponse, start_after
from seam.apps.web.undo import add_undo_routes
from seam.contracts.execution import Submission
from seam.contracts.images import MAX_IMAGES, with_placeholders
from seam.contracts.memory import MemoryTarget
from seam.contracts.turn_extras import TurnExtras

if TYPE_CHECKING:
    from seam.apps.web.keys import KeyStore
    from seam.wiring.settings import Settings

STATIC = Path(__file__).parent / "static"
# Seconds between two looks at whether FastAPI's telemetry is on (`SeamApp`).
TELEMETRY_RECHECK_SECONDS = 1.0


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewSession(_Body):
    name: str | None = Field(None, min_length=1, max_length=200)
    personality: str | None = Field(None, min_length=1, max_length=100)


class NewMessage(_Body):
    text: str = Field(max_length=200_000)  # may be "" when it shows images
    submission_id: str | None = Field(None, min_length=1, max_length=200)
    personality: str | None = Field(None, min_length=1, max_length=100)
    images: list[ImageIn] = Field(default_factory=list, max_length=MAX_IMAGES)


class ApprovalAnswer(_Body):
    decision: Literal["once", "session", "always", "deny", "never"]


class PersonalityFiles(_Body):
    soul: str = Field(min_length=1, max_length=200_000)
    config: str = Field("", max_length=200_000)


class MemoryFiles(_Body):
    memory: list[str] | None = None
    user: list[str] | None = None


def submission_body(backend: WebBackend, sub: Submission) -> dict[str, Any]:
    return submission_dict(sub, backend.owned_name(sub.session_key))


async def principal(request: Request) -> Principal:
    """Set by `AuthGate` before any route runs (so a bad body never hides a 401).
    Async, so FastAPI does not hand it to a worker thread on every request."""
    who: Principal = request.state.principal
    return who


Who = Annotated[Principal, Depends(principal)]


class SeamApp(FastAPI):
    """FastAPI with one layer outside its whole middleware stack: `outermost` (the busy
    routes' fast paths, `front.py`), built with the stack on the first request.

    A request goes straight to that stack, as Starlette's `__call__` would hand it on,
    while FastAPI's own telemetry is off (no OpenTelemetry provider is installed: Seam
    installs none). FastAPI asks whether it is on at every request, a look at three
    global providers that cost about 4% of an event stream's opening; here it is asked
    at most once a second (`TELEMETRY_RECHECK_SECONDS`), and while it is on, or after a
    provider is installed, requests go FastAPI's way as before."""

    outermost: Callable[[Any], Any] | None = None
    _telemetry_off = False
    _telemetry_checked = -TELEMETRY_RECHECK_SECONDS

    def build_middleware_stack(self) -> Any:
        stack = super().build_middleware_stack()
        return stack if self.outermost is None else self.outermost(stack)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        stack = self.middleware_stack
        if stack is not None and scope["type"] == "http" and self._no_telemetry(scope):
            scope["app"] = self
            await stack(scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    def _no_telemetry(self, scope: Any) -> bool:
        """Whether FastAPI would hand this request on with no telemetry of its own."""
        if self.root_path or "fastapi.telemetry" in scope:
            return False  # FastAPI's way, as always
        now = time.monotonic()
        if now - self._telemetry_checked >= TELEMETRY_RECHECK_SECONDS:
            self._telemetry_checked = now
            native = getattr(self, "_native_telemetry", None)
            self._telemetry_off = native is None or not native.enabled()
        return self._telemetry_off


def create_app(
    backend: WebBackend,
    auth: Authenticator,
    *,
    settings: "Settings | None" = None,
    keys: "KeyStore | None" = None,
) -> FastAPI:
    """The whole app, composed in the order FastAPI matches routes: meta, the native API
    (the dashboard's sections among it), the OpenAI-compatible API, then the page (its
    catch-all last); middleware around it. `settings` and `keys` serve the dashboard's
    owner sections (configuration, cron, keys...)."""
    limiter = RateLimiter(backend.config.rate_limit)
    app = SeamApp(
        title="Seam",
        version="1",
        lifespan=backend_lifespan(backend),
        docs_url=None,
        redoc_url=None,
        description="The HTTP API of `seam serve`.",
        dependencies=[Depends(authorize)],
    )
    install(app)
    add_meta_routes(app, backend)
    api = APIRouter(prefix="/api")
    add_session_routes(api, backend)
    add_event_routes(api, backend)
    add_approval_routes(api, backend)
    add_undo_routes(api, backend, principal)
    add_image_routes(api, backend, principal)
    add_settings_routes(api, backend)
    add_control_routes(api, Control(backend, settings, keys))
    app.include_router(api)

    from seam.apps.web.openai.routes import router as openai_router

    app.include_router(openai_router(backend, principal))
    add_page_routes(app, auth)
    add_middleware(app, backend, auth, limiter)
    return app


def backend_lifespan(
    backend: WebBackend,
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """The backend starts with the app and closes with it, whatever stopped the server."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await backend.start()
        try:
            yield
        finally:
            await backend.aclose()

    return lifespan


def add_meta_routes(app: FastAPI, backend: WebBackend) -> None:
    """`/healthz` (open, for probes) and `/metrics` (behind auth: it names sessions' load)."""

    @app.get("/healthz", tags=["meta"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/metrics", tags=["meta"], response_class=PlainTextResponse)
    async def metrics(_: Who) -> PlainTextResponse:
        return PlainTextResponse(backend.metrics.render(), media_type="text/plain; version=0.0.4")


def add_session_routes(api: APIRouter, backend: WebBackend) -> None:
    """Sessions and their messages, each scoped to the caller's tenant."""

    @api.get("/sessions")
    async def list_sessions(who: Who, q: str | None = None, usage: bool = False) -> dict[str, Any]:
        """Your sessions, newest first (`q`: those whose messages match it); `usage=true`
        adds each one's tokens and cost (the dashboard's Sessions section)."""
        return {"sessions": await backend.list_sessions(who.tenant, q, usage=usage)}

    @api.post("/sessions", status_code=201)
    async def create_session(who: Who, body: NewSession | None = None) -> dict[str, Any]:
        body = body or NewSession()
        return await backend.create_session(who.tenant, body.name, body.personality)

    @api.get("/sessions/{name}")
    async def show_session(who: Who, name: str) -> dict[str, Any]:
        detail = await backend.session_detail(who.tenant, name)
        return detail

    @api.delete("/sessions/{name}", status_code=204)
    async def delete_session(who: Who, name: str) -> Response:
        await backend.delete_session(who.tenant, name)
        return Response(status_code=204)

    @api.post("/sessions/{name}/messages", status_code=202)
    async def post_message(who: Who, name: str, body: NewMessage) -> dict[str, Any]:
        # (`message_posts.py` serves a plain one outside the app: keep the two in step;
        # a comment, not a docstring, which would change the route's OpenAPI entry)
        text, extras = body.text, None
        if body.images:  # checked, and the model asked, before anything is admitted
            images = decode_images(body.images)
            await check_vision(backend, backend.key_for(who.tenant, name), body.personality)
            text, extras = with_placeholders(text, images), TurnExtras(images=images)
        sub = await backend.post_message(
            who.tenant,
            name,
            text,
            submission_id=body.submission_id,
            personality=body.personality,
            extras=extras,
        )
        return submission_body(backend, sub)


def add_event_routes(api: APIRouter, backend: WebBackend) -> None:
    """A session's events as Server-Sent Events, resumable from `Last-Event-ID`. The plain
    request is served outside the app (`front.py`); this route documents it and answers
    the rest (refusals, bad input, unknown sessions)."""

    @api.get(
        "/sessions/{name}/events",
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def events(
        who: Who,
        name: str,
        after: Annotated[int | None, Query(ge=0)] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> StreamingResponse:
        try:
            start = start_after(after, last_event_id)
        except ValueError:
            raise ApiError(400, "Last-Event-ID must be an event's sequence number") from None
        key = await backend.existing_key(who.tenant, name)
        return EventStreamResponse(backend.follow(key, start), backend, key)


def add_approval_routes(api: APIRouter, backend: WebBackend) -> None:
    """Answering a waiting approval and cancelling a session's turns: the person's brakes."""

    @api.post("/sessions/{name}/approvals/{call_id}")
    async def approve(who: Who, name: str, call_id: str, body: ApprovalAnswer) -> dict[str, Any]:
        await backend.respond(who, name, call_id, body.decision)
        return {"call_id": call_id, "decision": body.decision}

    @api.post("/sessions/{name}/cancel")
    async def cancel(who: Who, name: str) -> dict[str, Any]:
        subs = await backend.cancel(who.tenant, name)
        return {"cancelled": [submission_body(backend, s) for s in subs]}


def add_settings_routes(api: APIRouter, backend: WebBackend) -> None:
    """Personalities and memory files: what the page edits besides sessions."""

    @api.get("/personalities")
    async def personalities(_: Who) -> dict[str, Any]:
        return {"personalities": backend.personalities()}

    @api.get("/personalities/{pid}")
    async def personality(who: Who, pid: str) -> dict[str, Any]:
        return backend.personality(who, pid)

    @api.put("/personalities/{pid}")
    async def put_personality(who: Who, pid: str, body: PersonalityFiles) -> dict[str, Any]:
        return backend.put_personality(who, pid, body.soul, body.config)

    @api.get("/memory")
    async def memory(who: Who) -> dict[str, Any]:
        return backend.memory(who)

    @api.put("/memory")
    async def put_memory(who: Who, body: MemoryFiles) -> dict[str, Any]:
        given: dict[MemoryTarget, list[str]] = {}
        if body.memory is not None:
            given["memory"] = body.memory
        if body.user is not None:
            given["user"] = body.user
        return backend.put_memory(who, given)


LOGIN_REFUSED = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Seam: login link refused</title></head>
<body><h1>This login link does not work</h1>
<p>A login link works once, and this one is used up or wrong. Open the link that
<code>seam serve</code> printed when it started (each start prints a new one), or call the
API with a key (<code>seam keys create NAME</code>).</p></body></html>
"""


def add_page_routes(app: FastAPI, auth: Authenticator) -> None:
    """The page: `/` (a login token becomes a cookie) and its static files. Registered
    last, since `/{path:path}` matches anything the API did not."""

    @app.get("/", include_in_schema=False)
    async def index(request: Request, token: str | None = None) -> Response:
        if token is not None:
            cookie = auth.login(token)
            if cookie is None:
                return HTMLResponse(LOGIN_REFUSED, status_code=401)
            response = RedirectResponse("/", status_code=303)
            name = cookie_name((request.scope.get("server") or (None, None))[1])
            response.set_cookie(name, cookie, httponly=True, samesite="strict", path="/")
            return response
        return FileResponse(STATIC / "index.html")

    @app.get("/{path:path}", include_in_schema=False)
    async def static(path: str) -> Response:
        target = (STATIC / path).resolve()
        if not target.is_relative_to(STATIC.resolve()) or not target.is_file():
            raise ApiError(404, f"no such route or file: /{path}")
        return FileResponse(target)


def add_middleware(
    app: SeamApp, backend: WebBackend, auth: Authenticator, limiter: RateLimiter
) -> None:
    """Auth and rate limits, then CORS (only for configured origins), then the body cap,
    added in this order so the body cap runs outermost (Starlette wraps the last added);
    the security headers wrap them all, so every response carries them. Outside even
    Starlette's own layers: the busy routes' fast paths (`front.py`), which ask the same
    `Gate`."""
    config = backend.config
    gate = Gate(auth, limiter, RateLimiter(config.tenant_rate_limit))
    app.add_middleware(AuthGate, gate=gate, metrics=backend.metrics)
    if config.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=config.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
            allow_credentials=True,
        )
    app.add_middleware(BodyLimit, max_bytes=config.max_body_bytes, widen=body_limit)
    app.add_middleware(SecurityHeaders)
    cors = bool(config.cors_origins)
    app.outermost = lambda stack: Front(stack, backend, gate, cors)
