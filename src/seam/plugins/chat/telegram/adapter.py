"""The Telegram `ChatAdapter`, on python-telegram-bot's `Bot` (the HTTP client and types
only: PTB's `Updater` is not used, because it advances the update offset before the
handlers have finished, and a crash in between loses the message).

Receiving is our own long-poll loop: `getUpdates(offset, timeout)`, each update turned
into an `InboundMessage` / `ButtonPress` and handed to `deliver`; only when `deliver`
returned (the event is a durable submission) does the offset move past it, and the next
`getUpdates` carries that offset, which is what tells Telegram the update was received.
If `deliver` raises, the offset stays, the loop backs off and asks again, and Telegram
hands the same update back. On `close` a last `getUpdates(timeout=0)` acknowledges what
was delivered, so a clean restart does not see it again (an unclean one does, and the
submission id derived from chat and message id recognises the repeat).

Staying connected: network errors and 5xx answers rebuild the HTTP client and reconnect
with exponential back-off (capped) forever, state "reconnecting"; a 429 waits the
`retry_after` Telegram asks for; a long poll that makes no progress is abandoned after
its timeout plus a grace (PTB's read timeout, and our own deadline on top, since a dead
socket can otherwise park the poller for good). A rejected token (HTTP 401/404, which is
also what a wrong `base_url` gives) puts the adapter "down" with a one-line error, and it
keeps trying, slowly (every `down_retry` seconds): the token may be revoked and reissued,
or a self-hosted Bot API server may be restarting, and an adapter that stops for good is
exactly the silent death the watchdog exists to prevent. `last_received_at` moves at every
`getUpdates` return, empty ones included, so a watchdog can tell a quiet chat from a dead
poll.

Messages are sent in Telegram's HTML parse mode (see `markdown_telegram` for why); if
Telegram still refuses the markup ("can't parse entities") the text is resent as plain
text. "message is not modified" on an edit counts as success.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import logging
import time
import warnings
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    Update,
    User,
)
from telegram.constants import ChatAction
from telegram.error import BadRequest, InvalidToken, RetryAfter, TelegramError, TimedOut
from telegram.request import HTTPXRequest

from seam.contracts.chat import (
    AdapterHealth,
    ButtonPress,
    ChatLimits,
    ChatRef,
    Inbound,
    Keyboard,
)
from seam.plugins.chat.common import remember, wait_closed
from seam.plugins.chat.health import HealthBook
from seam.plugins.chat.markdown_telegram import TELEGRAM_LIMIT, format_telegram, html_to_plain
from seam.plugins.chat.telegram.parse import PLATFORM, button_press, inbound_message

log = logging.getLogger(__name__)

ALLOWED_UPDATES = ("message", "callback_query")
_CALLBACK_DATA_MAX = 64  # bytes, Telegram's limit on an inline button's callback_data
_LONG_DATA_KEPT = 10_000
_MAX_RETRY_AFTER = 120.0  # a longer flood wait is reported to the caller, not slept through
_T = TypeVar("_T")


class TelegramAdapter:
    """A bot account on Telegram as a `ChatAdapter` (see the module docstring)."""

    platform = PLATFORM
    limits = ChatLimits(max_text=TELEGRAM_LIMIT, min_edit_interval=1.0, max_buttons_per_row=8)

    def __init__(
        self,
        token: str,
        *,
        base_url: str = "",
        base_file_url: str = "",
        clock: Callable[[], float] = time.time,
        poll_timeout: float = 30.0,
        retry_initial: float = 1.0,
        retry_cap: float = 60.0,
        down_retry: float = 300.0,
        poll_grace: float = 10.0,
    ) -> None:
        if not token:
            raise ValueError("a Telegram bot token is required")
        self._token = token
        self._base_url, self._base_file_url = _urls(base_url, base_file_url)
        self._clock = clock
        self.poll_timeout = poll_timeout
        self._retry_initial = retry_initial
        self._retry_cap = retry_cap
        self._down_retry = down_retry
        self._poll_grace = poll_grace
        self._book = HealthBook("telegram", clock, log)
        self._offset: int | None = None  # the next update we have not delivered yet
        self._acked: int | None = None  # the offset Telegram last heard from us
        self._me: User | None = None
        self._closed = False
        self._closing = asyncio.Event()
        self._sender: Bot | None = None
        self._sender_lock = asyncio.Lock()
        self._long_data: OrderedDict[str, str] = OrderedDict()

    # ---- receiving -----------------------------------------------------------------

    async def run(self, deliver: Callable[[Inbound], Awaitable[None]]) -> None:
        delay = self._retry_initial
        while not self._closed:
            poller = self._bot(poll=True)
            try:
                await self._race(poller.initialize())
                self._me = poller.bot
                await self._race(poller.delete_webhook(drop_pending_updates=False))
                self._book.set_state("connected")
                delay = self._retry_initial
                await self._poll(poller, deliver)
            except _Closing:
                break
            except InvalidToken:
                self._book.set_state(
                    "down",
                    "Telegram rejected the bot token (HTTP 401/404): check the token and base_url",
                )
                await self._pause(self._down_retry)
            except RetryAfter as exc:
                self._book.set_state(
                    "reconnecting", f"flood control: retry after {_seconds(exc):g}s"
                )
                await self._pause(_seconds(exc))
            except (TelegramError, OSError, TimeoutError) as exc:
                self._book.set_state("reconnecting", self._describe(exc))
                await self._pause(delay)
                delay = min(delay * 2, self._retry_cap)
            except Exception as exc:  # a bug or a surprise in a reply: keep the adapter alive
                log.exception("telegram: unexpected error in the poll loop")
                self._book.set_state("reconnecting", self._describe(exc))
                await self._pause(delay)
                delay = min(delay * 2, self._retry_cap)
            finally:
                if self._closed:
                    await self._final_ack(poller)
                with contextlib.suppress(Exception):
                    await poller.shutdown()
        self._book.set_state("stopped")

    async def _poll(self, bot: Bot, deliver: Callable[[Inbound], Awaitable[None]]) -> None:
        failures = 0
        while not self._closed:
            offset = self._offset
            try:
                updates = await self._race(
                    bot.get_updates(
                        offset=offset,
                        timeout=max(1, round(self.poll_timeout)),
                        allowed_updates=list(ALLOWED_UPDATES),
                    ),
                    deadline=self.poll_timeout + self._poll_grace,
                )
            except RetryAfter as exc:
                self._book.failed(f"flood control: retry after {_seconds(exc):g}s")
                await self._pause(_seconds(exc))
                continue
            self._acked = offset
            self._book.progress()
            self._book.set_state("connected")
            for update in updates:
                event = self._event(update)
                if event is not None:
                    try:
                        await deliver(event)
                    except Exception as exc:
                        failures += 1
                        wait = min(self._retry_initial * 2 ** (failures - 1), self._retry_cap)
                        error = f"delivering update {update.update_id}: {exc!r}"
                        self._book.failed(error)
                        log.warning("telegram: %s; asking again in %.1fs", error, wait)
                        await self._pause(wait)
                        break  # the offset stays: Telegram sends this update again
                    failures = 0
                self._offset = update.update_id + 1

    async def _final_ack(self, bot: Bot) -> None:
        """Tell Telegram about what was delivered since the last poll (best effort)."""
        if self._offset is None or self._offset == self._acked:
            return
        with contextlib.suppress(Exception):
            async with asyncio.timeout(5):
                await bot.get_updates(offset=self._offset, timeout=0, limit=1)
                self._acked = self._offset

    def _event(self, update: Update) -> Inbound | None:
        try:
            if update.callback_query is not None:
                return button_press(update.callback_query, self._long_data)
            if update.message is not None:
                return inbound_message(
                    update.message, self._me, received_at=self._clock(), fetcher=self._fetcher
                )
        except Exception:
            log.exception("telegram: could not read update %s; skipped", update.update_id)
        return None

    def _fetcher(self, file_id: str) -> Callable[[], Awaitable[bytes]]:
        async def fetch() -> bytes:
            bot = await self._sending_bot()
            file = await bot.get_file(file_id)
            return bytes(await file.download_as_bytearray())

        return fetch

    # ---- sending -------------------------------------------------------------------

    async def send(self, chat: ChatRef, text: str, *, buttons: Keyboard = ()) -> str:
        """Post HTML text (from `format`) to a chat or forum topic. Telegram's refusals
        propagate as PTB errors: `Forbidden` (blocked, kicked) and `BadRequest` are
        permanent, `NetworkError`/`TimedOut` and a `RetryAfter` too long to wait are not."""
        bot = await self._sending_bot()
        markup = self._markup(buttons)

        async def attempt(plain: bool) -> Message:
            return await bot.send_message(
                chat_id=_chat_id(chat),
                text=html_to_plain(text) if plain else text,
                parse_mode=None if plain else "HTML",
                message_thread_id=_thread_id(chat),
                reply_markup=markup,
            )

        message = await self._with_fallback(attempt)
        return str(message.message_id)

    async def edit(
        self, chat: ChatRef, message_id: str, text: str, *, buttons: Keyboard = ()
    ) -> None:
        """Replace a message's text (and its buttons: none given removes them, as Telegram
        does when an edit carries no keyboard); an identical edit is not an error."""
        bot = await self._sending_bot()
        markup = self._markup(buttons)

        async def attempt(plain: bool) -> object:
            return await bot.edit_message_text(
                text=html_to_plain(text) if plain else text,
                chat_id=_chat_id(chat),
                message_id=int(message_id),
                parse_mode=None if plain else "HTML",
                reply_markup=markup,
            )

        try:
            await self._with_fallback(attempt)
        except BadRequest as exc:
            if "not modified" not in exc.message.lower():
                raise

    async def typing(self, chat: ChatRef) -> None:
        """Best effort: a typing indicator that fails is not worth failing a turn for."""
        try:
            bot = await self._sending_bot()
            await bot.send_chat_action(
                chat_id=_chat_id(chat), action=ChatAction.TYPING, message_thread_id=_thread_id(chat)
            )
        except (TelegramError, OSError) as exc:
            log.debug("telegram: typing indicator failed: %s", self._describe(exc))

    async def answer_press(self, press: ButtonPress, text: str | None = None) -> None:
        """Answer a button press (stops the button's spinner; `text` shows as a toast). A
        press too old to answer is not an error worth raising."""
        bot = await self._sending_bot()
        try:
            await self._retrying(lambda: bot.answer_callback_query(press.press_id, text=text))
        except BadRequest as exc:
            log.info("telegram: could not answer a button press: %s", exc.message)

    def format(self, markdown: str) -> list[str]:
        return format_telegram(markdown, self.limits.max_text)

    def health(self) -> AdapterHealth:
        return self._book.current

    async def close(self) -> None:
        """Stop the poll loop (it acknowledges what it delivered on its way out) and close
        the HTTP clients. `run` returns soon after."""
        self._closed = True
        self._closing.set()
        sender, self._sender = self._sender, None
        if sender is not None:
            with contextlib.suppress(Exception):
                await sender.shutdown()
        self._book.set_state("stopped")

    # ---- helpers -------------------------------------------------------------------

    def _bot(self, *, poll: bool) -> Bot:
        kwargs: dict[str, Any] = {}
        if self._base_url:
            kwargs["base_url"] = self._base_url
            kwargs["base_file_url"] = self._base_file_url
        return Bot(
            self._token,
            request=HTTPXRequest(connection_pool_size=8, read_timeout=15.0, connect_timeout=10.0),
            # getUpdates adds its long-poll timeout to this read timeout.
            get_updates_request=HTTPXRequest(
                connection_pool_size=1, read_timeout=self._poll_grace / 2, connect_timeout=10.0
            )
            if poll
            else None,
            **kwargs,
        )

    async def _sending_bot(self) -> Bot:
        if self._closed:
            raise RuntimeError("the Telegram adapter is closed")
        async with self._sender_lock:
            if self._sender is None:
                bot = self._bot(poll=False)
                try:
                    await bot.initialize()
                except InvalidToken:
                    # PTB's message quotes the token; whoever logs this must not.
                    raise InvalidToken("Telegram rejected the bot token") from None
                self._sender = bot
            return self._sender

    async def _with_fallback(self, attempt: Callable[[bool], Awaitable[_T]]) -> _T:
        """Send with HTML; if Telegram cannot parse it, send the same words as plain text."""
        try:
            return await self._retrying(lambda: attempt(False))
        except BadRequest as exc:
            if "can't parse entities" not in exc.message.lower():
                raise
            log.warning("telegram: markup refused (%s); sending as plain text", exc.message)
            return await self._retrying(lambda: attempt(True))

    async def _retrying(self, call: Callable[[], Awaitable[_T]], *, attempts: int = 3) -> _T:
        """Honour Telegram's flood control: wait the `retry_after` it asks for and try
        again, a few times; a longer wait goes back to the caller (the outbox retries)."""
        for attempt in range(attempts):
            try:
                return await call()
            except RetryAfter as exc:
                wait = _seconds(exc)
                if attempt == attempts - 1 or wait > _MAX_RETRY_AFTER:
                    raise
                log.info("telegram: flood control, waiting %.1fs", wait)
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    def _markup(self, buttons: Keyboard) -> InlineKeyboardMarkup | None:
        rows = [
            [InlineKeyboardButton(b.label, callback_data=self._callback_data(b.data)) for b in row]
            for row in buttons
            if row
        ]
        return InlineKeyboardMarkup(rows) if rows else None

    def _callback_data(self, data: str) -> str:
        """Telegram keeps at most 64 bytes of callback data; longer data travels as a short
        id (a hash, so the same data always gets the same id) remembered in memory."""
        if len(data.encode()) <= _CALLBACK_DATA_MAX:
            return data
        digest = base64.urlsafe_b64encode(hashlib.sha256(data.encode()).digest()).decode()
        short = f"~{digest[:32]}"
        remember(self._long_data, short, data, _LONG_DATA_KEPT)
        return short

    async def _race(self, call: Awaitable[_T], *, deadline: float | None = None) -> _T:
        """Await `call`, unless the adapter is closed first (raises `_Closing`) or the
        `deadline` passes (raises TimeoutError: the connection is presumed dead)."""
        task = asyncio.ensure_future(call)
        closing = asyncio.ensure_future(self._closing.wait())
        try:
            done, _ = await asyncio.wait(
                {task, closing}, timeout=deadline, return_when=asyncio.FIRST_COMPLETED
            )
        except BaseException:  # cancelled: take the request down with us
            task.cancel()
            raise
        finally:
            closing.cancel()
        if task in done:
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        if closing in done:
            raise _Closing
        raise TimeoutError(f"no answer from Telegram within {deadline:g}s")

    async def _pause(self, seconds: float) -> None:
        await wait_closed(self._closing, seconds)

    def _describe(self, exc: BaseException) -> str:
        """A one-line error with the token taken out (PTB quotes it in some messages)."""
        if isinstance(exc, TimedOut | TimeoutError):
            return f"no answer from Telegram in time ({type(exc).__name__})"
        text = f"{type(exc).__name__}: {exc}".replace(self._token, "<token>")
        return text.splitlines()[0] if text else type(exc).__name__


class _Closing(Exception):
    """The adapter was closed while waiting on Telegram."""


def _urls(base_url: str, base_file_url: str) -> tuple[str, str]:
    """A self-hosted Bot API server (or a test's fake) at `base_url`: its root or its
    `.../bot` prefix. The file URL is derived the same way unless given."""
    if not base_url:
        return "", ""
    url = base_url.rstrip("/")
    if "{token}" in url:
        return url, base_file_url or url.replace("/bot{token}", "/file/bot{token}")
    root = url[: -len("/bot")] if url.endswith("/bot") else url
    return f"{root}/bot", base_file_url or f"{root}/file/bot"


def _seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PTB warns that retry_after will become a timedelta
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def _chat_id(chat: ChatRef) -> int | str:
    try:
        return int(chat.chat_id)
    except ValueError:
        return chat.chat_id  # "@channelname"


def _thread_id(chat: ChatRef) -> int | None:
    return int(chat.thread_id) if chat.thread_id else None
