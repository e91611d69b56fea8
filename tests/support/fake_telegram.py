"""A fake Telegram Bot API server on 127.0.0.1, speaking the real wire format.

python-telegram-bot (or anything else) pointed at `fake.base_url` / `fake.base_file_url`
talks to it as to api.telegram.org: `POST /bot<token>/<method>` with a form body whose
nested values are JSON text, answered `{"ok": true, "result": ...}` or `{"ok": false,
"error_code", "description", "parameters"}` with the matching HTTP status (401 for a
wrong token, 404 for an unknown method, as Telegram does).

It behaves like Telegram where the tests need it to:
- updates queue with increasing `update_id`; `getUpdates(offset=N)` confirms (forgets)
  every update below N and returns the rest, holding the request open up to `timeout`
  seconds when there is nothing to return;
- sent messages get ids per chat and can be edited; an edit to the same text and markup
  is refused with "message is not modified"; HTML that Telegram would not parse is
  refused with "can't parse entities"; text over 4096 UTF-16 units with "message is too
  long";
- files pushed with `add_file` are served by `getFile` and `GET /file/bot<token>/<path>`.

Faults a test can script: `fail(method, status, ...)` (429 with `retry_after`, 5xx, 400),
`hang_polls()` (a long poll that never returns, until `release_polls()`), `drop(method)`
(the connection closed without an answer), `restart()` (the server goes away and comes
back on the same port, keeping its state, as the real one does across a network outage).

Every call is recorded (`fake.calls`, `await fake.wait_for(method)`). The same controls
are served over HTTP under `/_fake/...`, so a test can drive a fake running as its own
process: `python -m tests.support.fake_telegram [--port P] [--token T]` prints the port
on its first line of output, and `RemoteFakeTelegram(f"http://127.0.0.1:{port}")` drives it.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import html.parser
import itertools
import json
import re
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Self

import pytest
from aiohttp import web

DEFAULT_TOKEN = "123456:TEST-token"
BOT_ID = 123456
BOT_USERNAME = "seam_test_bot"
# Values Telegram treats as text even when they look like JSON ("123", "true").
_TEXT_FIELDS = frozenset(
    {"text", "caption", "parse_mode", "action", "callback_query_id", "file_id", "url"}
)
_HTML_TAGS = frozenset(
    {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "code", "pre", "a"}
    | {"blockquote", "tg-spoiler", "span", "tg-emoji"}
)
_MAX_POLL = 60.0
_TAG = re.compile(r"</?[a-z][a-z-]*(?:\s[^<>]*)?>")
_ENTITY = re.compile(r"&(?:lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);")


@dataclass(frozen=True)
class Call:
    """One Bot API request as the fake received it (nested values decoded from JSON)."""

    method: str
    params: dict[str, Any]
    at: float = field(default_factory=time.monotonic)


@dataclass
class _Fault:
    status: int
    description: str
    retry_after: int | None = None
    times: int = 1
    drop: bool = False


class FakeTelegram:
    """The fake server; use as `async with FakeTelegram() as fake:` inside the test's
    event loop (or through the `fake_telegram` fixture)."""

    def __init__(
        self,
        *,
        token: str = DEFAULT_TOKEN,
        bot_id: int = BOT_ID,
        bot_username: str = BOT_USERNAME,
        port: int = 0,
    ) -> None:
        self.token = token
        self.bot = {
            "id": bot_id,
            "is_bot": True,
            "first_name": "Seam",
            "username": bot_username,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }
        self.port = port
        self.calls: list[Call] = []
        self.updates: list[dict[str, Any]] = []  # not yet confirmed, oldest first
        self.messages: dict[tuple[int, int], dict[str, Any]] = {}  # what the bot sent
        self.chats: dict[int, dict[str, Any]] = {}
        self.files: dict[str, tuple[str, bytes, dict[str, Any]]] = {}  # file_id -> path, data
        self._faults: dict[str, list[_Fault]] = {}
        self._update_ids = itertools.count(1)
        self._message_ids: dict[int, itertools.count[int]] = {}
        self._file_ids = itertools.count(1)
        self._query_ids = itertools.count(1)
        self._changed = asyncio.Event()
        self._polls_hang = False
        self._release = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.confirmed_offset = 0

    # ---- lifecycle -----------------------------------------------------------------

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """For `Bot(base_url=...)`: the token is appended to it."""
        return f"{self.base}/bot"

    @property
    def base_file_url(self) -> str:
        return f"{self.base}/file/bot"

    async def start(self) -> Self:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/bot{token}/{method}", self._api)
        app.router.add_get("/bot{token}/{method}", self._api)
        app.router.add_get("/file/bot{token}/{path:.+}", self._file)
        app.router.add_post("/_fake/{action}", self._control)
        app.router.add_get("/_fake/{action}", self._control)
        self._release = asyncio.Event()
        runner = web.AppRunner(app, shutdown_timeout=0.5, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", self.port, reuse_address=True)
        await site.start()
        self._runner = runner
        self.port = runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        self._release.set()
        self._notify()
        if runner is not None:
            await runner.cleanup()

    async def restart(self, *, down_for: float = 0.0) -> None:
        """Go away (connections refused, open polls cut) and come back on the same port."""
        await self.stop()
        if down_for:
            await asyncio.sleep(down_for)
        await self.start()

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ---- what a test pushes --------------------------------------------------------

    def push_update(self, update: Mapping[str, Any]) -> dict[str, Any]:
        """Queue a raw update (an `update_id` is assigned when missing)."""
        item = dict(update)
        item.setdefault("update_id", next(self._update_ids))
        self.updates.append(item)
        self._notify()
        return item

    def push_message(
        self,
        text: str = "",
        *,
        chat_id: int = 1001,
        user_id: int = 1001,
        username: str = "ann",
        first_name: str = "Ann",
        chat_type: str = "private",
        chat_title: str | None = None,
        thread_id: int | None = None,
        reply_to: int | None = None,
        entities: Sequence[Mapping[str, Any]] | None = None,
        document: Mapping[str, Any] | None = None,
        photo: Sequence[Mapping[str, Any]] | None = None,
        voice: Mapping[str, Any] | None = None,
        caption: str | None = None,
        message_id: int | None = None,
    ) -> dict[str, Any]:
        """Queue a message from a user, as Telegram would deliver it. `reply_to` names a
        message the bot sent (so the message is a reply to the bot); an `@username` of
        the bot in the text gets its `mention` entity automatically."""
        chat = self._chat(chat_id, chat_type, chat_title, first_name)
        message: dict[str, Any] = {
            "message_id": message_id if message_id is not None else self._next_message_id(chat_id),
            "date": int(time.time()),
            "chat": chat,
            "from": {
                "id": user_id,
                "is_bot": False,
                "first_name": first_name,
                "username": username,
            },
        }
        if text:
            message["text"] = text
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            message["is_topic_message"] = True
        if reply_to is not None:
            replied = self.messages.get((chat_id, reply_to))
            message["reply_to_message"] = replied or {
                "message_id": reply_to,
                "date": int(time.time()),
                "chat": chat,
            }
        found = list(entities) if entities is not None else self._auto_entities(text)
        if found:
            message["entities"] = found
        if caption is not None:
            message["caption"] = caption
        if document is not None:
            message["document"] = dict(document)
        if photo is not None:
            message["photo"] = [dict(p) for p in photo]
        if voice is not None:
            message["voice"] = dict(voice)
        return self.push_update({"message": message})

    def push_callback(
        self,
        data: str,
        *,
        message_id: int,
        chat_id: int = 1001,
        user_id: int = 1001,
        username: str = "ann",
        query_id: str | None = None,
    ) -> dict[str, Any]:
        """Queue a press of an inline button on a message the bot sent."""
        message = self.messages.get((chat_id, message_id)) or {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": self._chat(chat_id, "private", None, "Ann"),
        }
        query = {
            "id": query_id or f"cq{next(self._query_ids)}",
            "from": {"id": user_id, "is_bot": False, "first_name": username, "username": username},
            "chat_instance": f"ci{chat_id}",
            "message": message,
            "data": data,
        }
        return self.push_update({"callback_query": query})

    def add_file(
        self, content: bytes, *, file_name: str = "notes.txt", mime_type: str = "text/plain"
    ) -> dict[str, Any]:
        """Store a file and return a `document` object for `push_message(document=...)`."""
        number = next(self._file_ids)
        file_id = f"file{number}"
        path = f"documents/file_{number}_{file_name}"
        document = {
            "file_id": file_id,
            "file_unique_id": f"u{file_id}",
            "file_name": file_name,
            "mime_type": mime_type,
            "file_size": len(content),
        }
        self.files[file_id] = (path, content, document)
        return document

    # ---- faults --------------------------------------------------------------------

    def fail(
        self,
        method: str,
        status: int = 500,
        description: str | None = None,
        *,
        retry_after: int | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next `times` calls of `method` with an error."""
        if description is None:
            description = {
                429: f"Too Many Requests: retry after {retry_after or 1}",
                400: "Bad Request",
                401: "Unauthorized",
                403: "Forbidden: bot was blocked by the user",
                409: "Conflict: terminated by other getUpdates request",
            }.get(status, "Internal Server Error")
        if status == 429 and retry_after is None:
            retry_after = 1
        self._faults.setdefault(method, []).append(_Fault(status, description, retry_after, times))

    def drop(self, method: str, *, times: int = 1) -> None:
        """Close the connection of the next `times` calls of `method` without answering."""
        self._faults.setdefault(method, []).append(_Fault(0, "", None, times, drop=True))

    def hang_polls(self) -> None:
        """From now on getUpdates is accepted and never answered: a dead long poll."""
        self._polls_hang = True

    def release_polls(self) -> None:
        self._polls_hang = False
        self._release.set()
        self._release = asyncio.Event()

    # ---- assertions ----------------------------------------------------------------

    def calls_of(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    async def wait_for(
        self,
        method: str,
        predicate: Callable[[Call], bool] | None = None,
        *,
        count: int = 1,
        timeout: float = 10.0,
    ) -> list[Call]:
        """Wait until `count` calls of `method` (matching `predicate`) were received."""

        def matching() -> list[Call]:
            return [
                c for c in self.calls if c.method == method and (predicate is None or predicate(c))
            ]

        async with asyncio.timeout(timeout):
            await self._until(lambda: len(matching()) >= count)
        return matching()

    async def _until(self, predicate: Callable[[], bool]) -> None:
        while not predicate():
            await self._changed.wait()

    def sent_texts(self, chat_id: int | None = None) -> list[str]:
        return [
            str(c.params.get("text"))
            for c in self.calls_of("sendMessage")
            if chat_id is None or c.params.get("chat_id") == chat_id
        ]

    # ---- the Bot API ---------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        params = await _params(request)
        if request.match_info["token"] != self.token:
            self._record(method, params)
            return _error(401, "Unauthorized")
        self._record(method, params)
        fault = self._take_fault(method)
        if fault is not None:
            if fault.drop:
                if request.transport is not None:
                    request.transport.abort()
                raise asyncio.CancelledError
            extra = {"retry_after": fault.retry_after} if fault.retry_after else None
            return _error(fault.status, fault.description, extra)
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            return _error(404, "Not Found")
        try:
            result = await handler(params)
        except _ApiError as err:
            return _error(err.status, err.description)
        return web.json_response({"ok": True, "result": result})

    async def _m_getMe(self, params: dict[str, Any]) -> Any:
        return self.bot

    async def _m_deleteWebhook(self, params: dict[str, Any]) -> Any:
        return True

    async def _m_getUpdates(self, params: dict[str, Any]) -> Any:
        offset = int(params.get("offset") or 0)
        if offset:
            self.confirmed_offset = max(self.confirmed_offset, offset)
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
        limit = int(params.get("limit") or 100)
        timeout = min(float(params.get("timeout") or 0), _MAX_POLL)
        if self._polls_hang:
            await self._release.wait()
            if self._runner is None:  # stopped while hanging: the connection just dies
                raise asyncio.CancelledError
        allowed = params.get("allowed_updates")

        def ready() -> list[dict[str, Any]]:
            found = [u for u in self.updates if not allowed or any(k in u for k in allowed)]
            return found[:limit]

        if not ready() and timeout > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._until(lambda: bool(ready()) or self._runner is None)
        return ready()

    async def _m_sendMessage(self, params: dict[str, Any]) -> Any:
        chat_id = _chat_id(params)
        text = self._checked_text(params)
        message = self._bot_message(chat_id, self._next_message_id(chat_id), text, params)
        if "message_thread_id" in params:
            message["message_thread_id"] = params["message_thread_id"]
        return message

    async def _m_editMessageText(self, params: dict[str, Any]) -> Any:
        chat_id = _chat_id(params)
        message_id = int(params["message_id"])
        current = self.messages.get((chat_id, message_id))
        if current is None:
            raise _ApiError(400, "Bad Request: message to edit not found")
        text = self._checked_text(params)
        markup = params.get("reply_markup")
        if current.get("text") == text and current.get("reply_markup") == markup:
            raise _ApiError(
                400,
                "Bad Request: message is not modified: specified new message content and "
                "reply markup are exactly the same as a current content and reply markup "
                "of the message",
            )
        message = self._bot_message(chat_id, message_id, text, params)
        message["edit_date"] = int(time.time())
        return message

    async def _m_sendChatAction(self, params: dict[str, Any]) -> Any:
        _chat_id(params)
        return True

    async def _m_answerCallbackQuery(self, params: dict[str, Any]) -> Any:
        if not params.get("callback_query_id"):
            raise _ApiError(400, "Bad Request: query is too old and response timeout expired")
        return True

    async def _m_getFile(self, params: dict[str, Any]) -> Any:
        stored = self.files.get(str(params.get("file_id")))
        if stored is None:
            raise _ApiError(400, "Bad Request: invalid file_id")
        path, content, _ = stored
        return {
            "file_id": params["file_id"],
            "file_unique_id": f"u{params['file_id']}",
            "file_size": len(content),
            "file_path": path,
        }

    async def _file(self, request: web.Request) -> web.StreamResponse:
        self._record("file", {"path": request.match_info["path"]})
        if request.match_info["token"] != self.token:
            return web.Response(status=401)
        for path, content, _ in self.files.values():
            if path == request.match_info["path"]:
                return web.Response(body=content)
        return web.Response(status=404)

    # ---- control over HTTP (for a fake in another process) -------------------------

    async def _control(self, request: web.Request) -> web.StreamResponse:
        action = request.match_info["action"]
        body: dict[str, Any] = {}
        if request.can_read_body:
            body = await request.json()
        body.update({k: _loose(v) for k, v in request.query.items()})
        if action == "message":
            return web.json_response(self.push_message(**body))
        if action == "callback":
            return web.json_response(self.push_callback(**body))
        if action == "update":
            return web.json_response(self.push_update(body))
        if action == "file":
            content = base64.b64decode(body.pop("content_b64"))
            return web.json_response(self.add_file(content, **body))
        if action == "fail":
            self.fail(**body)
        elif action == "drop":
            self.drop(**body)
        elif action == "hang":
            self.hang_polls()
        elif action == "release":
            self.release_polls()
        elif action == "calls":
            method = body.get("method")
            return web.json_response(
                [asdict(c) for c in self.calls if method is None or c.method == method]
            )
        elif action == "wait":
            found = await self.wait_for(
                str(body["method"]),
                count=int(body.get("count", 1)),
                timeout=float(body.get("timeout", 10)),
            )
            return web.json_response([asdict(c) for c in found])
        elif action == "state":
            return web.json_response(
                {"pending": [u["update_id"] for u in self.updates], "offset": self.confirmed_offset}
            )
        else:
            return web.json_response({"error": f"unknown action {action}"}, status=404)
        return web.json_response({"ok": True})

    # ---- helpers -------------------------------------------------------------------

    def _record(self, method: str, params: dict[str, Any]) -> None:
        self.calls.append(Call(method, params))
        self._notify()

    def _notify(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def _take_fault(self, method: str) -> _Fault | None:
        queue = self._faults.get(method)
        if not queue:
            return None
        fault = queue[0]
        fault.times -= 1
        if fault.times <= 0:
            queue.pop(0)
        return fault

    def _chat(
        self, chat_id: int, chat_type: str, title: str | None, first_name: str
    ) -> dict[str, Any]:
        chat = self.chats.get(chat_id)
        if chat is None:
            chat = {"id": chat_id, "type": chat_type}
            if chat_type == "private":
                chat["first_name"] = first_name
            else:
                chat["title"] = title or f"group {chat_id}"
            if chat_type == "supergroup":
                chat["is_forum"] = True
            self.chats[chat_id] = chat
        return chat

    def _next_message_id(self, chat_id: int) -> int:
        counter = self._message_ids.setdefault(chat_id, itertools.count(1))
        return next(counter)

    def _bot_message(
        self, chat_id: int, message_id: int, text: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        chat = self.chats.get(chat_id) or {"id": chat_id, "type": "private", "first_name": "Ann"}
        message: dict[str, Any] = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": chat,
            "from": {k: self.bot[k] for k in ("id", "is_bot", "first_name", "username")},
            "text": text,
        }
        if params.get("reply_markup") is not None:
            message["reply_markup"] = params["reply_markup"]
        self.messages[(chat_id, message_id)] = message
        return message

    def _checked_text(self, params: dict[str, Any]) -> str:
        text = str(params.get("text") or "")
        if params.get("parse_mode") == "HTML":
            problem = _html_problem(text)
            if problem:
                raise _ApiError(400, f"Bad Request: can't parse entities: {problem}")
            text = _html_text(text)
        if not text.strip():
            raise _ApiError(400, "Bad Request: message text is empty")
        if len(text.encode("utf-16-le")) // 2 > 4096:
            raise _ApiError(400, "Bad Request: message is too long")
        return text

    def _auto_entities(self, text: str) -> list[dict[str, Any]]:
        entities: list[dict[str, Any]] = []
        mention = f"@{self.bot['username']}"
        at = text.find(mention)
        if at >= 0:
            entities.append({"type": "mention", "offset": _u16(text[:at]), "length": _u16(mention)})
        if text.startswith("/"):
            command = text.split()[0]
            entities.append({"type": "bot_command", "offset": 0, "length": _u16(command)})
        return entities


class _ApiError(Exception):
    def __init__(self, status: int, description: str) -> None:
        super().__init__(description)
        self.status = status
        self.description = description


def _u16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _error(
    status: int, description: str, parameters: Mapping[str, Any] | None = None
) -> web.Response:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if parameters:
        body["parameters"] = dict(parameters)
    return web.json_response(body, status=status)


async def _params(request: web.Request) -> dict[str, Any]:
    if request.content_type == "application/json":
        data = await request.json()
        return dict(data) if isinstance(data, dict) else {}
    if request.can_read_body:
        form = await request.post()
        raw = {k: v for k, v in form.items() if isinstance(v, str)}
    else:
        raw = dict(request.query)
    return {k: (v if k in _TEXT_FIELDS else _loose(v)) for k, v in raw.items()}


def _loose(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


def _chat_id(params: Mapping[str, Any]) -> int:
    value = params.get("chat_id")
    if not isinstance(value, int):
        raise _ApiError(400, "Bad Request: chat not found")
    return value


class _HtmlCheck(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problem: str | None = None
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _HTML_TAGS:
            self.problem = self.problem or f'unsupported start tag "{tag}"'
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problem = self.problem or f'can\'t find end tag corresponding to start tag "{tag}"'
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _html_problem(text: str) -> str | None:
    if "<" in _TAG.sub("", text):
        return "unsupported start tag"
    if "&" in _ENTITY.sub("", text):
        return "unsupported HTML entity"
    checker = _HtmlCheck()
    checker.feed(text)
    checker.close()
    if checker.problem:
        return checker.problem
    if checker.stack:
        return f'can\'t find end tag corresponding to start tag "{checker.stack[-1]}"'
    return None


def _html_text(text: str) -> str:
    checker = _HtmlCheck()
    checker.feed(text)
    checker.close()
    return "".join(checker.text)


@pytest.fixture
async def fake_telegram() -> AsyncIterator[FakeTelegram]:
    """A running fake Bot API, in the test's event loop."""
    async with FakeTelegram() as fake:
        yield fake


class RemoteFakeTelegram:
    """Drives a fake running in another process through its `/_fake/...` controls
    (blocking calls: use them from a test's thread, not inside an event loop)."""

    def __init__(self, base: str, *, token: str = DEFAULT_TOKEN) -> None:
        self.base = base.rstrip("/")
        self.token = token
        self.base_url = f"{self.base}/bot"
        self.base_file_url = f"{self.base}/file/bot"

    def _post(self, action: str, body: Mapping[str, Any] | None = None, timeout: float = 30) -> Any:
        data = json.dumps(dict(body or {})).encode()
        request = urllib.request.Request(
            f"{self.base}/_fake/{action}", data=data, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())

    def push_message(self, text: str = "", **kwargs: Any) -> dict[str, Any]:
        return dict(self._post("message", {"text": text, **kwargs}))

    def push_callback(self, data: str, **kwargs: Any) -> dict[str, Any]:
        return dict(self._post("callback", {"data": data, **kwargs}))

    def add_file(self, content: bytes, **kwargs: Any) -> dict[str, Any]:
        body = {"content_b64": base64.b64encode(content).decode(), **kwargs}
        return dict(self._post("file", body))

    def fail(self, method: str, status: int = 500, **kwargs: Any) -> None:
        self._post("fail", {"method": method, "status": status, **kwargs})

    def drop(self, method: str, times: int = 1) -> None:
        self._post("drop", {"method": method, "times": times})

    def hang_polls(self) -> None:
        self._post("hang")

    def release_polls(self) -> None:
        self._post("release")

    def calls(self, method: str | None = None) -> list[dict[str, Any]]:
        query = "?" + urllib.parse.urlencode({"method": method}) if method else ""
        with urllib.request.urlopen(f"{self.base}/_fake/calls{query}", timeout=30) as response:
            return list(json.loads(response.read()))

    def wait_for(
        self, method: str, *, count: int = 1, timeout: float = 30.0
    ) -> list[dict[str, Any]]:
        """Blocks until the fake has seen `count` calls of `method` (raises on timeout)."""
        found = self._post(
            "wait", {"method": method, "count": count, "timeout": timeout}, timeout + 5
        )
        return list(found)

    def state(self) -> dict[str, Any]:
        return dict(self._post("state"))


async def _serve(port: int, token: str) -> None:
    fake = FakeTelegram(port=port, token=token)
    await fake.start()
    print(fake.port, flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await fake.stop()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A fake Telegram Bot API on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", default=DEFAULT_TOKEN)
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args.port, args.token))
    sys.exit(0)


if __name__ == "__main__":
    main()
