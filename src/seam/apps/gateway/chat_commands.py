"""What each chat slash command does, and for whom.

Commands act on the sender's own session (their tenant's, `tenants.py`): `/new`, `/stop`
and `/usage` of a paired user never touch the owner's conversation in the same chat.
What is the owner's alone is refused to a paired user with one line saying so: the
scheduled jobs (`/cron` shows the owner's prompts and targets), quiet hours (`/dnd on|off`,
for the `[gateway] owner` chat only, as before), and, in `runner.py`, the approval answers
that change the rules for everyone (Always, Never).

An MCP prompt (`/server:prompt arg=value`) is not answered here: its text becomes the
sender's turn, in their own session, like a message they typed (`Turn`); the servers are
the runtime's, the same ones every session of the gateway, owner's or tenant's, has.
`/mcp` lists those prompts (and, to the owner, the servers and their tools);
`/mcp server:prompt arg=value` runs one where a command cannot hold a `:` (Slack's
registered commands; Telegram's menu).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from seam.apps.gateway.chats import ChatSessions
from seam.apps.gateway.commands import HELP, PROMPT, command_argument, usage_text
from seam.apps.gateway.tenants import ChatTenants
from seam.contracts.chat import InboundMessage
from seam.contracts.execution import UNSETTLED
from seam.contracts.outbox import Outbox
from seam.contracts.sessions import SessionNotFound
from seam.wiring.mcp import PromptError, command_text, runtime_servers
from seam.wiring.runtime import Runtime

# Commands only the owner (a user the config names) may run, with the refusal.
OWNER_ONLY = {"cron": "Only the owner sees the scheduled jobs."}


@dataclass(frozen=True)
class Turn:
    """A command whose answer is a turn of the agent: `text` is submitted as the message."""

    text: str


@dataclass
class ChatCommands:
    """The commands over the gateway's parts; `cancel_local(submission_id)` stops a turn
    this process drives (the store's abort covers the others)."""

    runtime: Runtime
    chats: ChatSessions
    tenants: ChatTenants
    outbox: Outbox
    cancel_local: Callable[[str], None]

    async def run(self, command: str, msg: InboundMessage) -> str | Turn:
        """The reply to `command` sent by `msg`'s user, or the `Turn` it asks for."""
        if command == "help":
            return HELP
        if command == PROMPT:
            return await self._prompt(msg.text)
        if command == "mcp":
            return await self._mcp(msg)
        refusal = OWNER_ONLY.get(command)
        if refusal is not None and not self.tenants.is_owner(msg.chat.platform, msg.user_id):
            return refusal
        tenant = self.tenants.tenant_of(msg.chat.platform, msg.user_id)
        if command == "new":
            await self.chats.start_new(msg.chat, tenant)
            return "Started a new conversation."
        key = self.chats.key(await self.chats.current(msg.chat, tenant), tenant)
        if command == "stop":
            return await self._stop(key)
        if command == "usage":
            return await self._usage(key)
        if command == "cron":
            from seam.wiring.cron import cron_lines

            return "\n".join(await cron_lines(self.runtime))
        if command == "dnd":
            return await self._dnd(command_argument(msg.text), msg)
        if command == "undo":
            from seam.apps.gateway.undo import undo_reply

            return await undo_reply(self.runtime, key, command_argument(msg.text))
        return "I don't know that command. /help lists the ones I do."

    async def _prompt(self, line: str) -> str | Turn:
        """An MCP prompt's text as the turn; what is wrong with the line as one line."""
        try:
            return Turn(await command_text(runtime_servers(self.runtime), line))
        except PromptError as exc:
            return f"{exc}. /mcp lists the prompts."

    async def _mcp(self, msg: InboundMessage) -> str | Turn:
        """`/mcp server:prompt ...` runs the prompt (for platforms whose commands cannot
        hold a `:`, such as Slack's registered ones); bare `/mcp` lists: the owner sees
        `seam chat`'s report, others only the prompts."""
        from seam.apps.cli.mcp import mcp_report

        rest = msg.text.strip().split(maxsplit=1)[1:]
        if rest and ":" not in rest[0].split()[0]:
            return "Use /mcp, or /mcp server:prompt arg=value to run a prompt."
        if rest:
            return await self._prompt(f"/{rest[0]}")
        lines = await mcp_report(self.runtime)
        if not self.tenants.is_owner(msg.chat.platform, msg.user_id):
            lines = [line.strip() for line in lines if line.startswith("  prompt: ")]
        return "\n".join(lines) or "No MCP prompts here."

    async def _stop(self, key: str) -> str:
        stopped = 0
        for sub in await self.runtime.store.submissions(key, UNSETTLED):
            self.cancel_local(sub.id)
            await self.runtime.abort(sub.id)
            stopped += 1
        return "Stopping." if stopped else "Nothing is running."

    async def _usage(self, key: str) -> str:
        try:
            totals = await self.runtime.store.usage_totals(key)
        except SessionNotFound:
            # `/new` (or a first `/usage`): the session is made by the next message.
            return usage_text(0, 0, 0, 0.0, 0)
        usage = totals.usage
        return usage_text(
            totals.calls,
            usage.input_tokens,
            usage.output_tokens,
            totals.cost_usd,
            totals.unpriced_calls,
        )

    async def _dnd(self, action: str, msg: InboundMessage) -> str:
        from seam.apps.cli.dnd import ACTIONS
        from seam.wiring.delivery import build_dnd, dnd_command

        action = action or "status"
        if action not in ACTIONS:
            return "Use /dnd, /dnd on or /dnd off."
        if action != "status" and not self.is_named_owner(msg):
            return "Only the owner can turn quiet hours on or off."
        if self.runtime.settings is None:
            return "Quiet hours are not configured here."
        lines = await dnd_command(action, build_dnd(self.runtime.settings), self.outbox)
        return "\n".join(lines)

    def is_named_owner(self, msg: InboundMessage) -> bool:
        """The person `[gateway] owner` names: their private chat or their user id."""
        owner = self.tenants.section.owner
        return bool(owner) and owner in (str(msg.chat), f"{msg.chat.platform}:{msg.user_id}")


__all__ = ["OWNER_ONLY", "ChatCommands", "Turn"]
