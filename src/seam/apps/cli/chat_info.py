"""The slash commands of `seam chat` that report and tidy, without changing which session,
personality or model the chat uses: `/sessions`, `/usage`, `/compress`, `/dnd`, `/skills`,
`/cron`, `/mcp` and `/tools`. Kept apart from `chat.py` (which reads, runs turns and
switches) so each file has one job.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from seam.apps.cli.render import Style, first_line
from seam.apps.cli.runner import CliError, session_key
from seam.apps.cli.sessions import session_table
from seam.contracts.events import ContextCompacted, Notice

if TYPE_CHECKING:
    from rich.console import Console

    from seam.wiring.runtime import Runtime

RECENT_SESSIONS = 10
Handler = Callable[[str], Awaitable[None]]


@dataclass
class InfoCommands:
    """The handlers over a chat's runtime, its current session and personality (None:
    the session's own), the personality in use, and its output."""

    runtime: Runtime
    session: Callable[[], str]
    personality: Callable[[], str | None]
    current_personality: Callable[[], Awaitable[str]]
    say: Callable[[str], None]
    style: Style
    console: Console

    def handlers(self) -> dict[str, Handler]:
        return {
            "/sessions": self.sessions,
            "/usage": self.usage,
            "/compress": self.compress,
            "/dnd": self.dnd,
            "/skills": self.skills,
            "/cron": self.cron,
            "/mcp": self.mcp,
            "/tools": self.tools,
        }

    async def sessions(self, arg: str) -> None:
        runtime = self.runtime
        infos = await runtime.list_sessions(RECENT_SESSIONS)
        if not infos:
            self.say("no sessions yet")
            return
        current = session_key(runtime, self.session())
        self.console.print(session_table(infos, runtime.session_name_of, current=current))

    async def usage(self, arg: str) -> None:
        from seam.apps.cli.sessions import usage_line

        key = session_key(self.runtime, self.session())
        if await self.runtime.sessions.get(key) is None:
            self.say("usage: nothing yet in this session")
            return
        self.say(usage_line(await self.runtime.sessions.usage_totals(key)))
        context = await self.runtime.context_usage(self.session(), personality=self.personality())
        if context is not None:
            self.say(
                f"context: ~{context.tokens:,} of {context.window:,} tokens ({context.percent}%)"
            )
        for line in await self._limits(key):
            self.say(line)

    async def _limits(self, key: str) -> list[str]:
        """Spend against each limit that applies to the session (docs/budgets.md)."""
        from seam.wiring.budget import gate_of, line_text, scope_of

        scope = scope_of(self.runtime, key, await self.current_personality())
        return [f"budget {line_text(line)}" for line in await gate_of(self.runtime).lines(scope)]

    async def compress(self, arg: str) -> None:
        runtime = self.runtime
        if await runtime.sessions.get(session_key(runtime, self.session())) is None:
            self.say("nothing to compress yet")
            return
        self.say(self.style.dim("compressing…"))
        events = await runtime.compress(self.session(), personality=self.personality())
        if not events:
            self.say("nothing to compress: the conversation is still short")
        for event in events:
            if isinstance(event, ContextCompacted):
                how = "summarised" if event.summarised else "cleared old tool output"
                self.say(
                    f"compressed ({how}): {event.messages_before} → {event.messages_after}"
                    f" messages, ~{event.tokens_before:,} → ~{event.tokens_after:,} tokens"
                )
            elif isinstance(event, Notice):
                self.say(self.style.yellow(f"note ({event.kind}): {event.message}"))

    async def dnd(self, arg: str) -> None:
        from seam.apps.cli.dnd import ACTIONS, outbox_of
        from seam.wiring.delivery import build_dnd, dnd_command

        action = arg or "status"
        if action not in ACTIONS or self.runtime.settings is None:
            raise CliError("usage: /dnd, /dnd on or /dnd off")
        dnd = build_dnd(self.runtime.settings)
        lines = await dnd_command(action, dnd, outbox_of(self.runtime))
        self.say("\n".join(lines))

    async def skills(self, arg: str) -> None:
        from seam.apps.cli.skills import list_lines

        self.say("\n".join(list_lines(self.runtime.settings)))

    async def cron(self, arg: str) -> None:
        from seam.apps.cli.render import terminal_safe
        from seam.wiring.cron import cron_lines

        self.say(terminal_safe("\n".join(await cron_lines(self.runtime))))

    async def mcp(self, arg: str) -> None:
        from seam.apps.cli.mcp import mcp_report
        from seam.wiring.mcp import reload_mcp

        if arg == "reload":
            self.say("\n".join(await reload_mcp(self.runtime)))
        elif arg:
            raise CliError("usage: /mcp or /mcp reload")
        self.say("\n".join(await mcp_report(self.runtime)))

    async def tools(self, arg: str) -> None:
        current = await self.current_personality()
        try:
            tools = sorted(self.runtime.toolset(current), key=lambda tool: tool.name)
        except KeyError as exc:  # the personality broke on disk since it was chosen
            raise CliError(str(exc.args[0] if exc.args else exc)) from None
        if not tools:
            self.say(f"personality {current} has no tools")
            return
        width = max(len(tool.name) for tool in tools)
        lines = [f"  {t.name.ljust(width)}  {first_line(t.description)}" for t in tools]
        self.say(f"tools of {current}:\n" + "\n".join(lines))


__all__ = ["RECENT_SESSIONS", "InfoCommands"]
