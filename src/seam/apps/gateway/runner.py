"""The gateway: chat messages in, durable submissions through the Runtime, answers out
through the outbox.

Inbound: each message becomes a submission (id derived from platform, chat and message id:
`tg:<chat>:<message_id>`) before `deliver` returns, so the adapter acknowledges it to the
platform only once it is durable. A redelivered message finds its submission and is not
answered twice; a message that arrived while the gateway was down is delivered again by
the platform and answered then. Commands, refusals and pairing replies are keyed the same
way, so they too are sent once.

Driving: every submission runs in a task of its own through `Runtime.ask` (admission is
idempotent, so it drives the stored submission, or follows it while another process
does); messages to a busy chat queue behind the running one, as everywhere else.

Outbound: when a submission settles its answer is enqueued (`<id>:reply:<n>`) in the same
task. A crash between settling and enqueueing is covered when an adapter is taken
(`recover`): settled submissions of that platform from the last day that have no reply in
the outbox get one, before the adapter starts, so nothing this process does races it.
The per-adapter deliverer then sends what is pending, once (see wiring/gateway.py).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from seam.apps.gateway.approvals import (
    DECISIONS,
    LABELS,
    LASTING,
    LASTING_REFUSAL,
    Approvals,
    prompt_text,
)
from seam.apps.gateway.attachments import describe, readable, receive
from seam.apps.gateway.book import ChatBook
from seam.apps.gateway.chat_commands import ChatCommands
from seam.apps.gateway.chats import ChatSessions, id_prefix, message_key, parse_ref
from seam.apps.gateway.commands import parse_command
from seam.apps.gateway.inbox import ATTEMPTS, Inbox, one_line
from seam.apps.gateway.kept_files import KeptFiles
from seam.apps.gateway.pairing import PairingStore
from seam.apps.gateway.photos import photos_for
from seam.apps.gateway.replies import answer_text, enqueue_reply, replied
from seam.apps.gateway.retries import TICK, Retries, failed_text
from seam.apps.gateway.sender import AdapterSlot
from seam.apps.gateway.stream import TurnView
from seam.apps.gateway.tenants import ChatTenants
from seam.apps.gateway.turn_failures import TurnFailures
from seam.contracts.chat import (
    Button,
    ButtonPress,
    ChatAdapter,
    ChatRef,
    Inbound,
    InboundMessage,
)
from seam.contracts.events import ToolApprovalRequired
from seam.contracts.execution import UNSETTLED, Submission, SubmissionQuery
from seam.contracts.images import with_placeholders
from seam.contracts.outbox import Outbox
from seam.contracts.tools import CancelToken
from seam.contracts.turn_extras import TurnExtras
from seam.wiring.gateway_settings import GatewaySection
from seam.wiring.reach import working_dir_storage
from seam.wiring.runtime import Runtime

log = logging.getLogger("seam.gateway")

# Settled submissions this recent are checked for a missing reply when an adapter starts.
REPLAY_WINDOW = 24 * 3600.0
# Seconds between looks for unsettled submissions nobody here drives (after a restart,
# after taking an adapter over from a process that died).
RESCUE_EVERY = 5.0


@dataclass
class Driving:
    task: asyncio.Task[None]
    cancel: CancelToken


class Gateway:
    def __init__(
        self,
        runtime: Runtime,
        section: GatewaySection,
        pairing: PairingStore,
        *,
        working_dir: str,
        clock: Callable[[], float] = time.time,
        rescue_every: float = RESCUE_EVERY,
        book: ChatBook | None = None,
        retry_tick: float = TICK,
        files: KeptFiles | None = None,
    ) -> None:
        store = runtime.store
        if not isinstance(store, Outbox):
            raise TypeError("the gateway needs a store with an outbox")
        self.runtime = runtime
        self.outbox: Outbox = store
        self.section = section
        self.pairing = pairing
        self.working_dir = working_dir
        self.chats = ChatSessions(runtime)
        self.tenants = ChatTenants(section, runtime.tenant_id, runtime.harness)
        self.commands = ChatCommands(runtime, self.chats, self.tenants, store, self._cancel_local)
        self.book = book
        self.approvals = Approvals()
        self.inbox = Inbox(store, clock)
        self.files = files or KeptFiles(None)
        self.retries = Retries(self.inbox, self, runtime.owner, tick=retry_tick, clock=clock)
        self.slots: dict[str, AdapterSlot] = {}
        self._clock = clock
        self._rescue_every = rescue_every
        self._driving: dict[str, Driving] = {}
        self._owners: dict[str, frozenset[str]] = {}
        self.turn_failures = TurnFailures(store)
        self._background: set[asyncio.Task[Any]] = set()

    def slot(self, platform: str) -> AdapterSlot:
        return self.slots.setdefault(platform, AdapterSlot())

    # Inbound

    async def deliver(self, adapter: ChatAdapter, event: Inbound) -> None:
        """The adapters' callback: returns once the event is durable (or handled). An
        update that fails is parked for its retries (`inbox.py`) and the chat told, so
        the platform's acknowledgement never waits on it; only a store that cannot even
        park it makes this raise (the adapter then asks the platform again)."""
        if isinstance(event, ButtonPress):
            try:
                await self._press(adapter, event)
            except Exception:  # a press is not retried: the person can press again
                log.exception("handling a button press in %s failed", event.chat)
            return
        sid = message_key(event)
        fetch = await self._fetch_first(sid, event)
        if fetch or await self.inbox.waiting(event.chat):
            # Its files are downloaded first, in a task of their own (`kept_files.py`),
            # or an earlier update of this chat waits for a retry: parked, in order.
            if fetch:
                self.files.begin(sid, event.attachments)
            await self.inbox.park(sid, event, tried=0)
            return
        try:
            if self._paired_sender(event):  # their first message may wait: it goes first
                await self.retries.run_waiting(adapter, event.chat)
            await self._message(adapter, event)
        except Exception as exc:
            error = one_line(exc)
            log.warning("update %s failed (try 1 of %d): %s", sid, ATTEMPTS, error, exc_info=True)
            await self.inbox.park(sid, event, tried=1, error=error)
            await self._say(adapter, event.chat, sid, failed_text(error), kind="error")

    def allowed(self, platform: str, user_id: str) -> bool:
        return user_id in self.section.allowed(platform) or self.pairing.is_paired(
            platform, user_id
        )

    def _paired_sender(self, msg: InboundMessage) -> bool:
        """Whether `msg` comes from a paired user, not one of `allow` (whose messages
        never read the pairing file)."""
        platform = msg.chat.platform
        return msg.user_id not in self.section.allowed(platform) and self.pairing.is_paired(
            platform, msg.user_id
        )

    async def handle_parked(self, adapter: ChatAdapter, msg: InboundMessage) -> None:
        """A parked update's next try (`retries.py`): as it came, with its kept files,
        raising when it fails."""
        await self._message(adapter, self.files.restore(message_key(msg), msg))

    def ready(self, sid: str) -> bool:
        """Whether parked update `sid` can be tried (its files are not downloading)."""
        return not self.files.busy(sid)

    def settled(self, sid: str) -> None:
        """Parked update `sid` was handled or is dead: its kept files go."""
        self.files.forget(sid)

    async def _fetch_first(self, sid: str, msg: InboundMessage) -> bool:
        """Whether `msg` has files to download before it is handled: a new message from
        an allowed user, addressed to us, with a document to read."""
        if self.files.root is None or not any(map(readable, msg.attachments)):
            return False
        if (msg.is_group and not msg.addressed) or not self.allowed(msg.chat.platform, msg.user_id):
            return False
        return await self.runtime.store.submission(sid) is None

    async def handle_paired(self, adapter: ChatAdapter, msg: InboundMessage, sid: str) -> None:
        """A stranger's waiting message, run once they are paired (under an id of its
        own: `sid` itself was answered with the pairing code)."""
        paired = f"{sid}:paired"
        existing = await self.runtime.store.submission(paired)
        if existing is not None:
            self._drive(adapter.platform, existing)
        elif not await replied(self.outbox, paired):
            await self._admit(adapter, msg, paired)

    async def tell(
        self, adapter: ChatAdapter, chat: ChatRef, source: str, text: str, kind: str
    ) -> None:
        await self._say(adapter, chat, source, text, kind=kind)

    async def _message(self, adapter: ChatAdapter, msg: InboundMessage) -> None:
        if msg.is_group and not msg.addressed:
            return
        sid = message_key(msg)
        existing = await self.runtime.store.submission(sid)
        if existing is not None:  # redelivered: it is answered (or being answered) once
            self._owners.setdefault(sid, frozenset({msg.user_id}))
            self._drive(adapter.platform, existing)
            return
        if await replied(self.outbox, sid):
            return  # a command, refusal or pairing reply already answered it
        if not self.allowed(msg.chat.platform, msg.user_id):
            await self._pair(adapter, msg, sid)
            return
        await self._admit(adapter, msg, sid)

    async def _admit(self, adapter: ChatAdapter, msg: InboundMessage, sid: str) -> None:
        """Answer a command, or submit the message (as submission `sid`) and drive it."""
        command = parse_command(msg.text)
        text = msg.text.strip()
        if command is not None:
            answer = await self.commands.run(command, msg)
            if isinstance(answer, str):
                await self._say(adapter, msg.chat, sid, answer)
                return
            text = answer.text  # an MCP prompt: its text is the turn (chat_commands.py)
        # The sender's tenant: the owner's, or a paired user's own (`tenants.py`).
        tenant = self.tenants.tenant_of(msg.chat.platform, msg.user_id)
        key = self.chats.key(await self.chats.current(msg.chat, tenant), tenant)
        photos = await photos_for(self.runtime, key, msg.attachments)  # (`photos.py`)
        refused = photos.refused
        if photos.others:
            storage = working_dir_storage(self.runtime, self.working_dir)
            got = await receive(photos.others, msg.message_id, storage)
            refused = [*refused, *got.refused]
            if got.saved:
                text = f"{text}\n\n{describe(got.saved)}".strip()
        if refused:
            await self._say(adapter, msg.chat, sid, " ".join(refused), kind="notice")
        if photos.stop or not (text or photos.images):
            return
        if msg.is_group:
            text = f"{msg.user_name}: {text}"
        session = await self.runtime.get_session(key)
        shown = tuple(photos.images)
        extras = TurnExtras(images=shown) if shown else None
        sub = await session.submit(with_placeholders(text, shown), submission_id=sid, extras=extras)
        if self.book is not None:
            self.book.seen(msg.chat, msg.message_id, is_group=msg.is_group)
        self._owners[sid] = frozenset({msg.user_id})
        self._drive(adapter.platform, sub)

    async def _pair(self, adapter: ChatAdapter, msg: InboundMessage, sid: str) -> None:
        request = self.pairing.request(msg.chat.platform, msg.user_id, msg.user_name, str(msg.chat))
        log.info("pairing requested by %s:%s (%s)", msg.chat.platform, msg.user_id, msg.user_name)
        kept = await self.inbox.park_for_pairing(sid, msg)
        text = (
            "I don't know you yet. Ask my owner to approve you with:\n\n"
            f"`seam pairing approve {request.code}`\n\n"
            "The code is valid for an hour."
        )
        if kept:
            text += " I will answer this message once you are approved."
        await self._say(adapter, msg.chat, sid, text)

    async def _say(
        self, adapter: ChatAdapter, chat: ChatRef, source: str, text: str, *, kind: str = "reply"
    ) -> None:
        await enqueue_reply(self.outbox, adapter, chat, source, text, kind=kind)

    # Driving submissions

    def _cancel_local(self, submission_id: str) -> None:
        driving = self._driving.get(submission_id)
        if driving is not None:
            driving.cancel.cancel("stopped from the chat")

    def _drive(self, platform: str, sub: Submission) -> None:
        if sub.id in self._driving:
            return
        token = CancelToken()
        task = asyncio.ensure_future(self._run(platform, sub, token))
        self._driving[sub.id] = Driving(task, token)
        task.add_done_callback(lambda _: self._driving.pop(sub.id, None))

    async def _run(self, platform: str, sub: Submission, token: CancelToken) -> None:
        name = self.runtime.session_name_of(sub.session_key)
        try:
            chat = parse_ref(name)
        except ValueError:
            log.warning("submission %s is not in a chat session (%s)", sub.id, name)
            return
        adapter = self.slot(platform).adapter
        if adapter is None:
            return  # the adapter stopped; whoever holds it next drives this
        owners = self._owners.get(sub.id) or self._default_owners(chat)
        view = TurnView(
            adapter,
            chat,
            on_approval=lambda event: self._ask(adapter, chat, event, owners),
        )
        if sub.state != "settled":
            view.start()
        try:
            # By its stored key: the session keeps the tenant it was admitted under.
            settled = await self.runtime.ask_key(
                sub.session_key,
                sub.input,
                submission_id=sub.id,
                on_event=view.on_event,
                cancel=token,
            )
        except Exception as exc:
            log.exception("driving %s failed", sub.id)
            await view.close()
            await self._drive_failed(adapter, chat, sub.id, exc)
            return
        preview = await view.close()
        if settled.state != "settled":
            return
        # A stopped turn keeps what it had said: the streamed text, when its own is gone.
        text = answer_text(settled, partial=view.said)
        await enqueue_reply(self.outbox, adapter, chat, settled.id, text, edit=preview)
        self._owners.pop(sub.id, None)

    async def _drive_failed(
        self, adapter: ChatAdapter, chat: ChatRef, sid: str, exc: Exception
    ) -> None:
        """A turn whose driving raised (not one that settled failed: that one answers
        with its error) is tried again by `rescue_forever`, `ATTEMPTS` times in all,
        restarts included (`turn_failures.py`); the chat is told once, and once more
        when it is given up (aborted)."""
        error = one_line(exc)
        tries = await self.turn_failures.record(sid, chat, error)
        if tries < ATTEMPTS:
            await self._say(adapter, chat, sid, failed_text(error), kind="turn-error")
            return
        text = f"I gave up on that message after {tries} tries ({error})."
        await self._say(adapter, chat, sid, text, kind="turn-dead")
        try:
            await self.runtime.abort(sid)
        except Exception as abort_error:
            log.warning("could not abort %s: %s", sid, abort_error)

    def _default_owners(self, chat: ChatRef) -> frozenset[str]:
        """Who may answer a rescued turn's approvals (its sender is not known here): the
        private chat's user and the platform's allowed users."""
        return frozenset({chat.chat_id}) | self.section.allowed(chat.platform)

    # Approvals

    def _ask(
        self,
        adapter: ChatAdapter,
        chat: ChatRef,
        event: ToolApprovalRequired,
        owners: Collection[str],
    ) -> None:
        text = prompt_text(event.command or event.name, event.reason)
        # Always and Never change the rules for everyone: offered in the owner's turns only.
        lasting = self.tenants.owners_session(event.session_key)
        rid, buttons = self.approvals.add(
            event.session_key, event.call_id, chat, owners, text, lasting=lasting
        )
        self.spawn(self._show_approval(adapter, chat, rid, text, buttons))

    async def _show_approval(
        self,
        adapter: ChatAdapter,
        chat: ChatRef,
        rid: str,
        text: str,
        buttons: Sequence[Sequence[Button]],
    ) -> None:
        try:
            parts = adapter.format(text)
            message_id = await adapter.send(chat, parts[-1] if parts else text, buttons=buttons)
            self.approvals.shown(rid, message_id)
        except Exception as exc:
            log.warning("could not show an approval request in %s: %s", chat, exc)

    async def _press(self, adapter: ChatAdapter, press: ButtonPress) -> None:
        rid, pending, answer = self.approvals.get(press.data)
        if pending is None or answer is None:
            await adapter.answer_press(press, "This request is no longer waiting.")
            return
        if press.user_id not in pending.owners:
            await adapter.answer_press(press, "not yours")
            return
        if answer in LASTING and not self.tenants.is_owner(press.chat.platform, press.user_id):
            await adapter.answer_press(press, LASTING_REFUSAL)
            return
        answered = self.runtime.respond_to(pending.session_key, pending.call_id, DECISIONS[answer])
        self.approvals.done(rid)
        label = LABELS[answer]
        await adapter.answer_press(
            press, label if answered else "This request is no longer waiting."
        )
        if pending.message_id is not None:
            note = f"{pending.text}\n\n_{'Answered' if answered else 'Expired'}: {label}_"
            try:
                parts = adapter.format(note)
                await adapter.edit(pending.chat, pending.message_id, parts[-1] if parts else note)
            except Exception as exc:
                log.info("could not mark the approval answered: %s", exc)

    # Recovery

    async def recover(self, platform: str) -> int:
        """Enqueue the missing replies of recently settled submissions of `platform` (a
        crash between settling and enqueueing); how many. Run before its adapter starts."""
        adapter = self.slot(platform).adapter
        if adapter is None:
            return 0
        prefix = id_prefix(platform) + ":"
        since = self._clock() - REPLAY_WINDOW
        found = 0
        for sub in await self.runtime.store.submissions(query=SubmissionQuery(states=("settled",))):
            if not sub.id.startswith(prefix) or (sub.settled_at or sub.updated_at) < since:
                continue
            if sub.id in self._driving or await replied(self.outbox, sub.id):
                continue
            try:
                chat = parse_ref(self.runtime.session_name_of(sub.session_key))
            except ValueError:
                continue
            await enqueue_reply(self.outbox, adapter, chat, sub.id, answer_text(sub))
            found += 1
        if found:
            log.info("%s: enqueued %d answer(s) a crash kept from being sent", platform, found)
        return found

    def catch_up(self, adapter: ChatAdapter) -> int:
        """Tell an adapter without redelivery (one with `catch_up_from`, Discord) the
        chats it answered in and the last message taken from each, so it reads what was
        posted since; how many chats."""
        catch_up_from = getattr(adapter, "catch_up_from", None)
        if catch_up_from is None or self.book is None:
            return 0
        chats = self.book.chats(adapter.platform)
        # Whether a chat is private, for adapters that want to be told (`is_dm`).
        told = "is_dm" in inspect.signature(catch_up_from).parameters
        for chat, last, group in chats:
            try:
                if told:
                    catch_up_from(chat, last, is_dm=not group)
                else:
                    catch_up_from(chat, last)
            except Exception as exc:  # a catch-up is best effort: never stop the adapter
                log.warning("%s: could not catch up %s: %s", adapter.platform, chat, exc)
        return len(chats)

    async def rescue_forever(self, platform: str) -> None:
        """Drive every unsettled submission of `platform` nobody here drives."""
        prefix = id_prefix(platform) + ":"
        while True:
            try:
                for sub in await self.runtime.store.submissions(query=UNSETTLED):
                    if not sub.id.startswith(prefix) or sub.id in self._driving:
                        continue
                    if not await self.turn_failures.given_up(sub.id):
                        self._drive(platform, sub)
            except Exception:
                log.exception("looking for submissions to drive failed")
            await asyncio.sleep(self._rescue_every)

    async def stop_platform(self, platform: str) -> None:
        """Hand back what this process drives for `platform` (the adapter was lost)."""
        prefix = id_prefix(platform) + ":"
        tasks = [d.task for sid, d in self._driving.items() if sid.startswith(prefix)]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.retries.stop(platform)

    async def aclose(self) -> None:
        tasks = [d.task for d in self._driving.values()] + list(self._background)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.retries.stop()
        await self.files.aclose()

    def spawn(self, work: Awaitable[object]) -> None:
        """Run `work` in the background (cancelled by `aclose`)."""
        task: asyncio.Task[Any] = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
