"""Which session a chat talks to, and the ids derived from a chat's messages.

A chat (or thread) maps to the public session name `str(ref)` ("telegram:<chat>[:<thread>]",
what `Runtime.session_key_for` turns into a durable key). `/new` starts a fresh one by
ending the current session; the next generation is named `"<ref>#<n>"`. The generation is
not kept in a file of its own: it is read back from the store, where an ended session
says the chat has moved on (so it holds across restarts and across gateway processes that
share a PostgreSQL store). A session ended by `[sessions] idle_end` counts the same way:
after a long silence the chat starts afresh, as the CLI's sessions do.

Sessions belong to a tenant (`tenants.py`): the owner's, or a paired user's own. The same
chat has a session of each tenant that writes in it (in a group, the owner's and a paired
member's are apart), each with its own generations.
"""

from __future__ import annotations

from seam.contracts.chat import ChatRef, InboundMessage
from seam.wiring.chat_platforms import id_prefix
from seam.wiring.runtime import Runtime
from seam.wiring.web import tenant_session_key

# Submission-id prefixes are each platform's `ChatPlatform.id_prefix` (`tg:<chat>:<id>`).
__all__ = ["ChatSessions", "id_prefix", "message_key", "parse_ref", "session_name"]


def message_key(msg: InboundMessage) -> str:
    """The submission id of a message: the same for a redelivered update, so admission
    recognises it (`tg:<chat>[:<thread>]:<message_id>`)."""
    where = str(msg.chat).split(":", 1)[1]
    return f"{id_prefix(msg.chat.platform)}:{where}:{msg.message_id}"


def parse_ref(text: str) -> ChatRef:
    """`"telegram:<chat>[:<thread>]"` (an outbox target, a session name without its
    `#<n>` generation) back into a ChatRef."""
    base = text.split("#", 1)[0]
    platform, _, rest = base.partition(":")
    if not platform or not rest:
        raise ValueError(f"not a chat: {text!r}")
    chat, _, thread = rest.partition(":")
    return ChatRef(platform, chat, thread or None)


def session_name(ref: ChatRef, generation: int) -> str:
    return str(ref) if generation == 0 else f"{ref}#{generation}"


class ChatSessions:
    """The current session of each chat (and tenant), read from the store and cached."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._generation: dict[tuple[str | None, str], int] = {}

    def key(self, name: str, tenant: str | None = None) -> str:
        """The durable key of session `name` of `tenant` (None: the runtime's own)."""
        if tenant is None:
            return self.runtime.session_key_for(name)
        return tenant_session_key(tenant, self.runtime.harness, name)

    async def current(self, ref: ChatRef, tenant: str | None = None) -> str:
        """The session name the chat's next message (from `tenant`) goes to."""
        generation = self._generation.get((tenant, str(ref)), 0)
        while True:
            name = session_name(ref, generation)
            info = await self.runtime.sessions.get(self.key(name, tenant))
            if info is None or not info.ended:
                self._generation[(tenant, str(ref))] = generation
                return name
            generation += 1

    async def start_new(self, ref: ChatRef, tenant: str | None = None) -> str:
        """End the chat's session (if it has one), so the next message starts another;
        idempotent: a repeated `/new` with nothing said since changes nothing."""
        name = await self.current(ref, tenant)
        key = self.key(name, tenant)
        if await self.runtime.sessions.get(key) is not None:
            await self.runtime.sessions.end(key)
            self.runtime.drop_session(key)
        return await self.current(ref, tenant)
