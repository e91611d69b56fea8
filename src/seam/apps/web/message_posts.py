"""`POST /api/sessions/{name}/messages`, the plain request, served outside the app
(`front.py`): a JSON body of text (and perhaps a submission id and a personality), posted
through the same `WebBackend.post_message`, answered with the same 202 body, headers and
errors. Profiled with a thousand messages posted at once, FastAPI's routing over every
route, its dependency solving and the body's model cost three times what admitting the
message does.

A body is plain when FastAPI's route would take it as it is: JSON (by the route's own
parser, `json.loads`) holding an object with `text` and no keys but `text`,
`submission_id` and `personality`, each a string within the model's bounds (`NewMessage`
in `app.py`) or, but for `text`, null. Anything else, images among it, goes on to FastAPI
with its body replayed, and is answered (or refused with its 422) as it always was.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import TypeAdapter
from starlette.types import Message, Receive, Send

from seam.apps.cli.durable import submission_dict
from seam.apps.web.access import refusal
from seam.apps.web.auth import Principal
from seam.apps.web.backend import WebBackend
from seam.apps.web.errors import crash_response, problem_response
from seam.apps.web.headers import HEADERS as SECURITY_HEADERS
from seam.apps.web.headers import secure
from seam.apps.web.images import body_limit

Scope = dict[str, Any]

# The route as FastAPI declares it (what `refusal` is asked about) and as a path.
MESSAGES_ROUTE = "/api/sessions/{name}/messages"
_PATH = re.compile(r"/api/sessions/([^/]+)/messages")
# The body's fields and the longest each may be (`NewMessage`'s bounds); the shortest is
# 1 but for `text` (which may be "", refused by the backend with its own 400).
_LONGEST = {"text": 200_000, "submission_id": 200, "personality": 100}
# FastAPI's answer to a route returning `dict[str, Any]`: pydantic's JSON of it.
_ANSWER = TypeAdapter(dict[str, Any])


def plain_request(scope: Scope, max_body_bytes: int) -> str | None:
    """The session's name when this is a POST of the route with a JSON body of a declared
    length within the body cap (`limits.py`, widened for images as `images.body_limit`
    does); None sends it the long way (the method is the caller's to check)."""
    match = _PATH.fullmatch(scope["path"])
    if match is None:
        return None
    length = json_type = None
    for name, value in scope["headers"]:
        if name == b"content-length":
            if length is not None or not value.isdigit():
                return None
            length = int(value)
        elif name == b"content-type":
            json_type = _is_json(value) if json_type is None else False
        elif name == b"transfer-encoding":
            return None
    if not json_type or length is None or length > body_limit(scope, max_body_bytes):
        return None
    return match.group(1)


def _is_json(value: bytes) -> bool:
    """`application/json`, with parameters or not, as FastAPI reads the header."""
    kind = value.split(b";", 1)[0].strip().lower()
    return kind == b"application/json"


def plain_message(body: bytes) -> tuple[str, str | None, str | None] | None:
    """The text, submission id and personality of a plain body (see the module
    docstring), or None."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if type(data) is not dict or "text" not in data:
        return None
    for field, value in data.items():
        longest = _LONGEST.get(field)
        if longest is None:
            return None  # an unknown field (refused) or images
        if value is None and field != "text":
            continue
        if type(value) is not str or len(value) > longest or not (value or field == "text"):
            return None
        if not _encodable(value):
            return None
    return data["text"], data.get("submission_id"), data.get("personality")


def _encodable(text: str) -> bool:
    """Whether pydantic takes the string (it refuses lone surrogates, which JSON's
    `\\ud800` escapes can make)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def read_body(receive: Receive) -> bytes | None:
    """The request's body, or None when the client went away before sending it all."""
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)


def replay(body: bytes, receive: Receive) -> Receive:
    """`receive` as if the body had not been read: it first, then the connection's own."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def again() -> Message:
        return pending.pop() if pending else await receive()

    return again


async def serve(
    backend: WebBackend, scope: Scope, receive: Receive, send: Send, who: Principal, name: str
) -> Receive | None:
    """Post a plain message and answer 202 with its submission, or the backend's refusal;
    else the body replayed for FastAPI."""
    body = await read_body(receive)
    if body is None:
        return None  # nobody to answer
    message = plain_message(body) if refusal(who, "POST", MESSAGES_ROUTE) is None else None
    if message is None:
        return replay(body, receive)
    text, submission_id, personality = message
    try:
        sub = await backend.post_message(
            who.tenant, name, text, submission_id=submission_id, personality=personality
        )
    except Exception as exc:
        refused = problem_response(exc)
        await (refused or crash_response())(scope, receive, secure(send))
        if refused is None:
            raise  # logged by `Front`, as the app's error handler would
        return None
    answer = _ANSWER.dump_json(submission_dict(sub, backend.owned_name(sub.session_key)))
    headers = [
        (b"content-length", str(len(answer)).encode()),
        (b"content-type", b"application/json"),
        *SECURITY_HEADERS,
    ]
    await send({"type": "http.response.start", "status": 202, "headers": headers})
    await send({"type": "http.response.body", "body": answer})
    return None


__all__ = ["MESSAGES_ROUTE", "plain_message", "plain_request", "serve"]
