"""Every error as `{"error": {"type", "message"}}` with a status that says what was wrong."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from seam.apps.web.problems import Conflict, Forbidden, Invalid, NotFound

log = logging.getLogger("seam.web")

# What the backend refuses, besides NotFound (whose message is its first argument).
PROBLEMS: dict[type[Exception], int] = {Conflict: 409, Forbidden: 403, Invalid: 400}
TYPES = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "rate_limited",
}


class ApiError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        kind: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind or TYPES.get(status, "error")
        self.headers = headers


def error_body(status: int, message: str, kind: str | None = None) -> dict[str, Any]:
    return {"error": {"type": kind or TYPES.get(status, "error"), "message": message}}


def error_response(
    status: int, message: str, kind: str | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(status, message, kind), status_code=status, headers=headers)


def problem_response(exc: Exception) -> JSONResponse | None:
    """The answer to what the backend refuses (`problems.py`) or an `ApiError`, as the
    app's handlers give it; None for anything else (a crash). The fast paths outside the
    app (`front.py`) answer with it too."""
    if isinstance(exc, ApiError):
        return error_response(exc.status, exc.message, exc.kind, exc.headers)
    if isinstance(exc, NotFound):
        return error_response(404, str(exc.args[0] if exc.args else exc))
    for kind, status in PROBLEMS.items():
        if isinstance(exc, kind):
            return error_response(status, str(exc))
    return None


def crash_response() -> JSONResponse:
    return error_response(500, "internal error (see the server's log)", "internal")


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for problem in exc.errors()[:3]:
        where = ".".join(str(p) for p in problem.get("loc", ()) if p != "body")
        parts.append(f"{where or 'body'}: {problem.get('msg', 'invalid')}")
    return "; ".join(parts) or "the request is not valid"


def install(app: FastAPI) -> None:
    async def problem(_: Request, exc: Exception) -> JSONResponse:
        answer = problem_response(exc)
        assert answer is not None
        return answer

    for kind in (ApiError, NotFound, *PROBLEMS):
        app.add_exception_handler(kind, problem)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else "request failed"
        if exc.status_code == 404 and message == "Not Found":
            message = "no such route"
        return error_response(exc.status_code, message, headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, _validation_message(exc))

    @app.exception_handler(Exception)
    async def crashed(_: Request, exc: Exception) -> JSONResponse:
        log.exception("request failed")
        return crash_response()
