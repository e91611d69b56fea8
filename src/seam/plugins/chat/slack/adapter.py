"""The Slack ChatAdapter: slack-bolt's `AsyncApp` over Socket Mode (`AsyncSocketModeHandler`),
the Web API through one `AsyncWebClient`.

**Ack after durable.** In Socket Mode Bolt's handler sends the envelope's ack only once
`app.async_dispatch` has returned a 200 (`slack_bolt/adapter/socket_mode/async_internals.py`).
With the default `process_before_response=False` Bolt acks an event *before* running its
listener (`listener/asyncio_runner.py`); with `process_before_response=True` the listener
runs inside the dispatch and the ack goes out only after it returned, and a listener that
raises makes the dispatch a 500, which is never acked. So the app is built with
`process_before_response=True` and the listener awaits `deliver`: a failure there means no
ack, and Slack sends the envelope again (it retries unacked envelopes, also on the next
connection); the submission id derived from channel and `ts` recognises the repeat.

**Staying connected.** The SDK's client reconnects by itself when the socket closes or its
ping goes unanswered. Over that, `run` supervises: the state is read from the client every
`check_interval`, progress is any websocket message or pong, and a connection that has not
come back within `rebuild_after` seconds is thrown away and built again from
`apps.connections.open`, with exponential back-off (capped) forever.

**Typing.** Slack has no typing indicator for bots in Socket Mode. In a thread the adapter
tries `assistant.threads.setStatus` (it works in apps with the Agents & Assistants
feature); where Slack refuses it (`not_allowed_token_type`, `missing_scope`, ...) typing
becomes a no-op for the rest of the run. Outside threads it is a no-op.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.app.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from seam.contracts.chat import (
    AdapterHealth,
    ButtonPress,
    ChatLimits,
    ChatRef,
    Inbound,
    Keyboard,
)
from seam.plugins.chat.common import reconnect_forever, remember, wait_closed
from seam.plugins.chat.health import HealthBook
from seam.plugins.chat.markdown_slack import SLACK_MAX_TEXT, format_slack
from seam.plugins.chat.slack.events import (
    ACTION_PREFIX,
    PLATFORM,
    blocks_for,
    button_press,
    inbound_message,
    is_answerable,
    slash_command,
)

_log = logging.getLogger("seam.gateway.slack")


class _NoTokenNotice(logging.Filter):
    """Bolt warns that `token` is unused when SLACK_BOT_TOKEN is set and a client is
    given, which is exactly how the adapter builds it; the notice would only confuse."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "`token` will be unused" not in record.getMessage()


_bolt_log = logging.getLogger("seam.gateway.slack.bolt")
_bolt_log.addFilter(_NoTokenNotice())
DEFAULT_BASE_URL = "https://slack.com/api/"
_RECENT = 1024  # deliveries remembered, so `message` + `app_mention` of one post go once
_TYPING_STATUS = "is typing…"
_TRANSIENT = frozenset({"ratelimited", "internal_error", "fatal_error", "service_unavailable"})

Deliver = Callable[[Inbound], Awaitable[None]]


class SlackAdapter:
    platform = PLATFORM
    limits = ChatLimits(max_text=SLACK_MAX_TEXT, min_edit_interval=1.0, max_buttons_per_row=5)

    def __init__(
        self,
        *,
        bot_token: str,
        app_token: str,
        base_url: str | None = None,
        clock: Callable[[], float] = time.time,
        ping_interval: float = 10.0,
        check_interval: float = 1.0,
        rebuild_after: float | None = None,
        backoff: tuple[float, float] = (1.0, 60.0),
    ) -> None:
        self._bot_token = bot_token
        self._app_token = app_token
        self._clock = clock
        self._ping_interval = ping_interval
        # How long a healthy socket may go without progress (a pong comes every
        # `ping_interval`): the gateway's watchdog rebuilds after three times this.
        self.poll_timeout = 2 * ping_interval
        self._check_interval = check_interval
        self._rebuild_after = rebuild_after if rebuild_after is not None else 4 * ping_interval
        self._backoff = backoff
        base = base_url or DEFAULT_BASE_URL
        self._client = AsyncWebClient(
            token=bot_token,
            base_url=base if base.endswith("/") else base + "/",
            logger=_log,
            retry_handlers=[
                AsyncConnectionErrorRetryHandler(max_retry_count=2),
                AsyncRateLimitErrorRetryHandler(max_retry_count=2),
            ],
        )
        self._book = HealthBook("slack", clock, _log)
        self._closed = asyncio.Event()
        self._handler: AsyncSocketModeHandler | None = None
        self._bot_user_id: str | None = None
        self._bot_threads: set[tuple[str, str]] = set()
        self._recent: OrderedDict[tuple[str, str], asyncio.Future[None]] = OrderedDict()
        self._typing_works = True
        self._names: dict[str, str] = {}

    # -- inbound

    async def run(self, deliver: Deliver) -> None:
        try:
            await reconnect_forever(self._closed, self._backoff, lambda: self._connect(deliver))
        finally:
            self._book.set_state("stopped")

    async def _connect(self, deliver: Deliver) -> bool:
        """One Socket Mode connection, supervised until it is rebuilt or the adapter
        closes; True if it was up at some point."""
        handler = AsyncSocketModeHandler(
            self._build_app(deliver),
            app_token=self._app_token,
            web_client=self._client,
            ping_interval=self._ping_interval,
        )
        handler.client.on_message_listeners.append(self._on_socket_message)
        self._handler = handler
        try:
            handler.client.wss_uri = await self._open_connection()
            await handler.connect_async()  # type: ignore[no-untyped-call]
            self._book.set_state("connected")
            return await self._supervise(handler)
        except (TimeoutError, SlackApiError, aiohttp.ClientError, OSError) as exc:
            self._failed(exc)
        except Exception as exc:  # anything else: still reconnect, never give up
            _log.exception("slack: the connection failed")
            self._failed(exc)
        finally:
            self._handler = None
            await _quietly_close(handler)
        return False

    def _build_app(self, deliver: Deliver) -> AsyncApp:
        # `signing_secret` is unused in Socket Mode; passing it keeps Bolt from reading
        # SLACK_SIGNING_SECRET. process_before_response: see the module docstring.
        app = AsyncApp(
            client=self._client,
            signing_secret="",
            process_before_response=True,
            logger=_bolt_log,
        )

        async def on_message(event: dict[str, Any], context: dict[str, Any]) -> None:
            await self._on_message(event, context, deliver)

        async def on_action(ack: Callable[[], Awaitable[Any]], body: dict[str, Any]) -> None:
            press = button_press(body)
            if press is not None:
                await deliver(press)
            await ack()

        async def on_command(ack: Callable[[], Awaitable[Any]], body: dict[str, Any]) -> None:
            self._book.progress()
            await deliver(slash_command(body, received_at=self._clock()))
            await ack()  # an empty ack: the answer comes as a message, like any other

        app.command(re.compile(r"^/"))(on_command)
        app.event("message")(on_message)
        app.event("app_mention")(on_message)
        app.action(re.compile(f"^{re.escape(ACTION_PREFIX)}"))(on_action)
        return app

    async def _on_message(
        self, event: dict[str, Any], context: dict[str, Any], deliver: Deliver
    ) -> None:
        self._book.progress()
        if not is_answerable(event):
            return
        self._bot_user_id = context.get("bot_user_id") or self._bot_user_id
        message = inbound_message(
            event,
            bot_user_id=self._bot_user_id,
            bot_threads=self._bot_threads,
            received_at=self._clock(),
            fetcher=self._fetcher,
            user_name=await self._user_name(str(event["user"])),
        )
        await self._deliver_once((message.chat.chat_id, message.message_id), message, deliver)

    async def _deliver_once(self, key: tuple[str, str], event: Inbound, deliver: Deliver) -> None:
        """One post arrives as `message` and again as `app_mention`: the second waits for
        the first and is acked with it (or fails with it, and both come again)."""
        earlier = self._recent.get(key)
        failed = (
            earlier is not None
            and earlier.done()
            and (earlier.cancelled() or earlier.exception() is not None)
        )
        if earlier is not None and not failed:
            await asyncio.shield(earlier)
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        remember(self._recent, key, done, _RECENT)
        try:
            await deliver(event)
        except Exception as exc:
            self._recent.pop(key, None)
            done.set_exception(exc)
            done.exception()  # retrieved: a waiter may not exist
            raise
        except BaseException:
            self._recent.pop(key, None)
            done.cancel()
            raise
        done.set_result(None)

    async def _user_name(self, user_id: str) -> str:
        """The person's display name (users.info, once per user); their id if Slack
        will not say (a missing `users:read` scope, say)."""
        name = self._names.get(user_id)
        if name is None:
            try:
                user = (await self._client.users_info(user=user_id)).get("user") or {}
                profile = user.get("profile") or {}
                name = str(
                    profile.get("display_name")
                    or profile.get("real_name")
                    or user.get("real_name")
                    or user.get("name")
                    or user_id
                )
            except Exception as exc:  # a name is a nicety; the message goes on without it
                _log.debug("slack: users.info for %s: %s", user_id, exc)
                name = user_id
            self._names[user_id] = name
        return name

    async def _open_connection(self) -> str:
        response = await self._client.apps_connections_open(app_token=self._app_token)
        return str(response["url"])

    async def _supervise(self, handler: AsyncSocketModeHandler) -> bool:
        """Watch the SDK's connection until it has been down for `rebuild_after`; True if
        it was up at some point (the back-off starts over)."""
        client = handler.client
        last_pong = client.last_ping_pong_time
        down_since: float | None = None
        was_up = False
        while not self._closed.is_set():
            await wait_closed(self._closed, self._check_interval)
            pong = client.last_ping_pong_time
            if pong is not None and pong != last_pong:
                last_pong = pong
                self._book.progress()
            if await client.is_connected():
                was_up = True
                down_since = None
                self._book.set_state("connected")
                continue
            now = self._clock()
            down_since = down_since if down_since is not None else now
            self._book.set_state("reconnecting", "the Socket Mode connection dropped")
            if now - down_since >= self._rebuild_after:
                break
        return was_up

    async def _on_socket_message(self, message: Any) -> None:
        self._book.progress()
        if self._book.current.state != "connected":
            self._book.set_state("connected")

    def _fetcher(self, url: str) -> Callable[[], Awaitable[bytes]]:
        async def fetch() -> bytes:
            headers = {"Authorization": f"Bearer {self._bot_token}"}
            async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as r:
                r.raise_for_status()
                return await r.read()

        return fetch

    # -- outbound

    async def send(self, chat: ChatRef, text: str, *, buttons: Keyboard = ()) -> str:
        kwargs: dict[str, Any] = {"channel": chat.chat_id, "text": text}
        if chat.thread_id is not None:
            kwargs["thread_ts"] = chat.thread_id
            self._bot_threads.add((chat.chat_id, chat.thread_id))
        if buttons:
            kwargs["blocks"] = blocks_for(text, buttons)
        response = await self._client.chat_postMessage(**kwargs)
        return str(response["ts"])

    async def edit(
        self, chat: ChatRef, message_id: str, text: str, *, buttons: Keyboard = ()
    ) -> None:
        # Blocks are always sent: an update without them would keep the old buttons.
        await self._client.chat_update(
            channel=chat.chat_id, ts=message_id, text=text, blocks=blocks_for(text, buttons)
        )

    async def typing(self, chat: ChatRef) -> None:
        if chat.thread_id is None or not self._typing_works:
            return
        try:
            await self._client.assistant_threads_setStatus(
                channel_id=chat.chat_id, thread_ts=chat.thread_id, status=_TYPING_STATUS
            )
        except SlackApiError as exc:
            code = exc.response.get("error")
            if code not in _TRANSIENT:
                self._typing_works = False
                _log.info("slack: no typing status here (%s); typing is off", code)
        except Exception as exc:  # typing is a nicety: never fail a turn over it
            _log.debug("slack: typing: %s", exc)

    async def answer_press(self, press: ButtonPress, text: str | None = None) -> None:
        """The press was acked when it was delivered; a text (a refusal, say) goes to the
        presser alone as an ephemeral message."""
        if text is None:
            return
        kwargs: dict[str, Any] = {
            "channel": press.chat.chat_id,
            "user": press.user_id,
            "text": text,
        }
        if press.chat.thread_id is not None:
            kwargs["thread_ts"] = press.chat.thread_id
        await self._client.chat_postEphemeral(**kwargs)

    def format(self, markdown: str) -> list[str]:
        return format_slack(markdown, self.limits.max_text)

    # -- state

    def health(self) -> AdapterHealth:
        return self._book.current

    async def close(self) -> None:
        self._closed.set()
        handler = self._handler
        if handler is not None:
            await _quietly_close(handler)

    def _failed(self, exc: BaseException) -> None:
        if isinstance(exc, SlackApiError):
            code = exc.response.get("error")
            if code in ("invalid_auth", "not_authed", "account_inactive", "token_revoked"):
                self._book.set_state("down", f"Slack refused the app token ({code})")
                return
            self._book.set_state("reconnecting", f"Slack answered {code}")
            return
        self._book.set_state("reconnecting", f"{type(exc).__name__}: {exc}")


async def _quietly_close(handler: AsyncSocketModeHandler) -> None:
    try:
        await handler.close_async()  # type: ignore[no-untyped-call]
    except Exception as exc:  # closing a broken socket may fail; it is gone either way
        _log.debug("slack: closing the socket: %s", exc)
