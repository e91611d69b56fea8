"""`seam chat`: a conversation in the terminal.

On a terminal it reads lines with prompt_toolkit (editing, history in
`$SEAM_HOME/history`); from a pipe it reads plain lines, so a chat can be scripted and
tested. Slash commands never reach the model. Ctrl-C during a turn cancels that turn
only; Ctrl-C at the prompt clears the line; Ctrl-D (or end of input) leaves.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from seam import __version__
from seam.apps.cli.approval import APPROVAL_PROMPT, approval_request_text, parse_approval
from seam.apps.cli.chat_undo import COMMANDS as UNDO_COMMANDS
from seam.apps.cli.chat_undo import UndoCommands
from seam.apps.cli.exits import USAGE
from seam.apps.cli.render import Style, TurnView, first_line
from seam.apps.cli.retries import RetryView
from seam.apps.cli.runner import (
    CliError,
    check_personality,
    check_session_name,
    check_toolset,
    fresh_session_name,
    open_runtime,
    run_turn,
    session_key,
    turn_time_limit,
)
from seam.apps.cli.sessions import session_table
from seam.apps.cli.turn_report import turn_report
from seam.apps.cli.workdir import confirm_working_dir, sandbox_banner
from seam.contracts.events import AgentEvent, ContextCompacted, Notice, ToolApprovalRequired
from seam.contracts.guardrail import UNAVAILABLE, ApprovalDecision
from seam.contracts.model import RetryNotice

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from rich.console import Console

    from seam.wiring.runtime import Runtime

RECENT_SESSIONS = 10
LOCAL_MODEL_NOTE = (
    "This is a small offline demo model (SmolLM2-135M): fine for trying Seam, weak at real"
    " work. For a real model set OPENAI_API_KEY, or OPENAI_BASE_URL for any"
    " OpenAI-compatible server (optionally SEAM_MODEL to pick the model), or add a [model]"
    " section to {config}."
)
COMMANDS = (
    ("/new", "start a new session"),
    ("/sessions", "list recent sessions"),
    ("/resume NAME", "switch to an existing session"),
    ("/personality [ID]", "show the current personality and the others, or switch"),
    ("/tools", "the tools the current personality may use"),
    ("/mcp [reload]", "MCP servers, their state and tools; reload re-reads the config"),
    ("/skills", "the Agent Skills found, and why one is not offered"),
    ("/SKILL-NAME [text]", "run a turn with that skill loaded"),
    ("/cron", "the cron jobs, their schedules and next runs"),
    ("/usage", "tokens and cost of this session, and how full its context is"),
    ("/compress", "summarise older messages to free context"),
    ("/dnd [on|off]", "do not disturb: hold what the agent sends unasked, or send it"),
    *UNDO_COMMANDS,
    ("/help", "this list"),
    ("/exit", "leave (Ctrl-D works too)"),
)


async def run_chat(
    session: str | None,
    personality: str | None,
    model: str | None,
    time_limit: float | None = None,
    *,
    yes: bool = False,
) -> int:
    _check_stdin()
    check_session_name(session)
    confirm_working_dir(yes)
    chat: Chat | None = None

    def on_retry(notice: RetryNotice) -> None:
        # Retries happen inside turns, each of which takes its spinner down at its end.
        if chat is not None:
            chat.retries(notice)

    async with open_runtime(model, on_retry=on_retry, interactive=True) as runtime:
        if session is not None:
            session_key(runtime, session)
        if personality:
            check_personality(runtime, personality)
        chat = Chat(
            runtime,
            session or fresh_session_name("chat"),
            personality,
            time_limit=turn_time_limit(runtime, time_limit),
        )
        await chat.run()
    return 0


def _check_stdin() -> None:
    """A chat reads its messages from stdin: closed, or a device that is not a terminal
    (`< /dev/null`), it could only print the banner and leave."""
    import os
    import stat

    stdin = sys.stdin
    if stdin is None:
        raise CliError(
            "stdin is closed: seam chat reads messages from a terminal or a pipe; use"
            ' seam run "question" for one question without input',
            USAGE,
        )
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError):
        return  # not a real file descriptor (a test harness): read it as it is
    if stat.S_ISCHR(mode) and not stdin.isatty():
        raise CliError(
            "stdin is not a terminal and gives no input (e.g. /dev/null): run seam chat in a"
            ' terminal, pipe messages to it, or use seam run "question"',
            USAGE,
        )


class Chat:
    def __init__(
        self,
        runtime: Runtime,
        session: str,
        personality: str | None,
        *,
        time_limit: float | None = None,
    ) -> None:
        from rich.console import Console

        self.runtime = runtime
        # Seconds each turn may take (None: no limit).
        self.time_limit = time_limit
        # The model's retries, shown inline in the turn they delay.
        self.retries = RetryView(sys.stdout, self._retry_line)
        self._view: TurnView | None = None
        self.session = session
        # None: the session's own personality (or the default for a new session).
        self.personality = personality
        # soft_wrap: long lines (paths, hints) wrap in the terminal, never mid-word by Rich.
        self.console: Console = Console(highlight=False, soft_wrap=True)
        self.style = Style.for_stream(sys.stdout)
        self.interactive = sys.stdin.isatty()
        self._prompt: PromptSession[str] | None = None
        self._commands: dict[str, Callable[[str], Awaitable[None]]] = {
            "/new": self._new,
            "/sessions": self._sessions,
            "/resume": self._resume,
            "/personality": self._personality,
            "/tools": self._tools,
            "/mcp": self._mcp,
            "/skills": self._skills,
            "/cron": self._cron,
            "/usage": self._usage,
            "/compress": self._compress,
            "/dnd": self._dnd,
            "/help": self._help,
        }
        undo = UndoCommands(runtime, lambda: self.session, self._say, self._read_line)
        self._commands.update(undo.handlers())

    async def run(self) -> None:
        await self._banner()
        while True:
            line = await self._read_line()
            if line is None:
                await self._end_session()
                return
            line = line.strip()
            if not line:
                continue
            if not line.startswith("/"):
                await self._turn(line)
                continue
            name, _, arg = line.partition(" ")
            if name in ("/exit", "/quit"):
                await self._end_session()
                return
            handler = self._commands.get(name)
            try:
                if handler is None:
                    await self._skill_turn(name, arg)
                    continue
                await handler(arg.strip())
            except CliError as exc:
                self._say(self.style.red(f"error: {exc.message}"))

    # -- input and output --

    async def _approve(self, event: ToolApprovalRequired) -> ApprovalDecision:
        """Ask inline; three answers that are not a choice mean deny, end of input means
        nobody is there to answer."""
        self._say(self.style.bold(approval_request_text(event)))
        for _ in range(3):
            answer = await self._read_line(APPROVAL_PROMPT)
            if answer is None:
                return UNAVAILABLE
            decision = parse_approval(answer)
            if decision is not None:
                return decision
            self._say("answer o, s, a, d or n")
        return "deny"

    async def _read_line(self, prompt: str = "") -> str | None:
        """The next line, or None at end of input (Ctrl-D)."""
        if not self.interactive:
            if prompt:
                sys.stdout.write(prompt)
                sys.stdout.flush()
            try:
                return sys.stdin.readline() or None
            except UnicodeDecodeError:
                self._say(self.style.red("error: that line is not valid UTF-8; it was skipped"))
                return ""
        if self._prompt is None:
            from prompt_toolkit import PromptSession
            from prompt_toolkit.history import FileHistory

            class RedactedHistory(FileHistory):
                """What is typed is kept for recall, but a pasted key is kept redacted."""

                def store_string(self, string: str) -> None:
                    super().store_string(redact(string) if redact is not None else string)

            settings = self.runtime.settings
            redact = self.runtime.redact
            history = RedactedHistory(str(settings.home / "history")) if settings else None
            self._prompt = PromptSession(history=history)
        try:
            return await self._prompt.prompt_async(prompt or "> ")
        except KeyboardInterrupt:  # Ctrl-C at the prompt: drop the line, ask again
            return ""
        except EOFError:
            return None

    async def _end_session(self) -> None:
        """Mark the current session ended (leaving the chat, `/new`), so `seam sessions
        prune` may delete it once it has been idle long enough. It can still be resumed."""
        sessions = self.runtime.sessions
        key = session_key(self.runtime, self.session)
        if await sessions.get(key) is not None:
            await sessions.end(key)

    def _say(self, text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def _retry_line(self, line: str) -> None:
        if self._view is not None:
            self._view.warn(line)
        else:
            self._say(self.style.yellow(line))

    async def _turn(self, text: str) -> None:
        try:
            key = session_key(self.runtime, self.session)
            # The session's own personality matters only when none was chosen.
            stored = None if self.personality else await self.runtime.sessions.get(key)
            check_toolset(self.runtime, stored, self.personality)
        except CliError as exc:
            self._say(self.style.red(f"error: {exc.message}"))
            return
        view = self._view = TurnView(sys.stdout, self.style, markdown=self.style.enabled)
        stop_retries = self.retries.stop

        def on_event(event: AgentEvent) -> None:
            stop_retries()
            view(event)

        try:
            result = await run_turn(
                self.runtime,
                key,
                text,
                personality=self.personality,
                on_event=on_event,
                approve=self._approve,
                time_limit=self.time_limit,
                stored=stored,
            )
        finally:
            self.retries.stop()
            self._view = None
            view.end_text()
        report = turn_report(result)
        shown = result.done is not None and result.done.finish_reason == "cancelled"
        if report.outcome == "timed_out":
            view.warn(f"error: {report.message}")
        elif report.outcome == "cancelled" and not shown:
            view.note("(cancelled)")
        elif report.outcome == "approval_unavailable":  # halts and errors the view showed
            view.note(f"({report.message})")
        if self.interactive:
            self._say("")

    async def _banner(self) -> None:
        from rich.markup import escape

        runtime = self.runtime
        settings = runtime.settings
        model = runtime.model
        personality = await self._current_personality()
        print_ = self.console.print
        print_(f"[bold]Seam {__version__}[/bold]")
        print_(
            f"provider {escape(model.name)} · model {escape(model.model)} · personality "
            f"{escape(personality)}"
        )
        if settings is not None and settings.provider == "local":
            print_(escape(LOCAL_MODEL_NOTE.format(config=settings.config_path)), style="yellow")
        backend, isolated = sandbox_banner(runtime)
        print_(f"sandbox {escape(backend)}", style=None if isolated else "bold yellow")
        info = await runtime.sessions.get(session_key(runtime, self.session))
        state = "new" if info is None else f"resumed, {info.message_count} messages"
        print_(f"session {escape(self.session)} ({state})")
        print_("[dim]Type a message, /help for commands, /exit or Ctrl-D to leave.[/dim]")

    async def _current_personality(self) -> str:
        if self.personality:
            return self.personality
        info = await self.runtime.sessions.get(session_key(self.runtime, self.session))
        if info is not None and info.personality:
            return info.personality
        return self.runtime.personalities.default_id

    # -- slash commands --

    async def _help(self, arg: str) -> None:
        width = max(len(name) for name, _ in COMMANDS)
        lines = [f"  {name.ljust(width)}  {what}" for name, what in COMMANDS]
        self._say("Commands:\n" + "\n".join(lines))

    async def _new(self, arg: str) -> None:
        await self._end_session()
        self.session = fresh_session_name("chat")
        self._say(f"new session {self.session}")

    async def _sessions(self, arg: str) -> None:
        runtime = self.runtime
        infos = await runtime.list_sessions(RECENT_SESSIONS)
        if not infos:
            self._say("no sessions yet")
            return
        current = session_key(runtime, self.session)
        self.console.print(session_table(infos, runtime.session_name_of, current=current))

    async def _resume(self, arg: str) -> None:
        if not arg:
            raise CliError("usage: /resume NAME (see /sessions for names)")
        info = await self.runtime.sessions.get(session_key(self.runtime, arg))
        if info is None:
            raise CliError(f"no session named {arg!r} (see /sessions)")
        self.session = arg
        self._say(f"resumed session {arg} ({info.message_count} messages)")

    async def _personality(self, arg: str) -> None:
        if arg:
            check_personality(self.runtime, arg)
            self.personality = arg
            self._say(f"personality is now {arg}")
            return
        current = await self._current_personality()
        lines = [f"current personality: {current}", "available:"]
        for p in self.runtime.personalities.list():
            mark = "*" if p.id == current else " "
            about = f" — {p.description}" if p.description else ""
            lines.append(f" {mark} {p.id}{about}")
        self._say(self.style.plain("\n".join(lines)))

    async def _usage(self, arg: str) -> None:
        from seam.apps.cli.sessions import usage_line

        key = session_key(self.runtime, self.session)
        if await self.runtime.sessions.get(key) is None:
            self._say("usage: nothing yet in this session")
            return
        self._say(usage_line(await self.runtime.sessions.usage_totals(key)))
        context = await self.runtime.context_usage(self.session, personality=self.personality)
        if context is not None:
            self._say(
                f"context: ~{context.tokens:,} of {context.window:,} tokens ({context.percent}%)"
            )

    async def _compress(self, arg: str) -> None:
        runtime = self.runtime
        if await runtime.sessions.get(session_key(runtime, self.session)) is None:
            self._say("nothing to compress yet")
            return
        self._say(self.style.dim("compressing…"))
        events = await runtime.compress(self.session, personality=self.personality)
        if not events:
            self._say("nothing to compress: the conversation is still short")
        for event in events:
            if isinstance(event, ContextCompacted):
                how = "summarised" if event.summarised else "cleared old tool output"
                self._say(
                    f"compressed ({how}): {event.messages_before} → {event.messages_after}"
                    f" messages, ~{event.tokens_before:,} → ~{event.tokens_after:,} tokens"
                )
            elif isinstance(event, Notice):
                self._say(self.style.yellow(f"note ({event.kind}): {event.message}"))

    async def _dnd(self, arg: str) -> None:
        from seam.apps.cli.dnd import ACTIONS, outbox_of
        from seam.wiring.delivery import build_dnd, dnd_command

        action = arg or "status"
        if action not in ACTIONS or self.runtime.settings is None:
            raise CliError("usage: /dnd, /dnd on or /dnd off")
        dnd = build_dnd(self.runtime.settings)
        lines = await dnd_command(action, dnd, outbox_of(self.runtime))
        self._say("\n".join(lines))

    async def _skills(self, arg: str) -> None:
        from seam.apps.cli.skills import list_lines

        self._say("\n".join(list_lines(self.runtime.settings)))

    async def _cron(self, arg: str) -> None:
        from seam.apps.cli.render import terminal_safe
        from seam.wiring.cron import cron_lines

        self._say(terminal_safe("\n".join(await cron_lines(self.runtime))))

    async def _skill_turn(self, name: str, arg: str) -> None:
        """`/<skill-name> text`: a turn whose message carries that skill's body."""
        from seam.wiring.skills import SkillError, UnknownSkill, skill_turn_text

        try:
            text = skill_turn_text(self.runtime.settings, name[1:], arg)
        except UnknownSkill:
            raise CliError(f"unknown command {name}; type /help for the list") from None
        except SkillError as exc:
            raise CliError(str(exc)) from None
        await self._turn(text)

    async def _mcp(self, arg: str) -> None:
        from seam.apps.cli.mcp import mcp_report
        from seam.wiring.mcp import reload_mcp

        if arg == "reload":
            self._say("\n".join(await reload_mcp(self.runtime)))
        elif arg:
            raise CliError("usage: /mcp or /mcp reload")
        self._say("\n".join(await mcp_report(self.runtime)))

    async def _tools(self, arg: str) -> None:
        current = await self._current_personality()
        try:
            tools = sorted(self.runtime.toolset(current), key=lambda tool: tool.name)
        except KeyError as exc:  # the personality broke on disk since it was chosen
            raise CliError(str(exc.args[0] if exc.args else exc)) from None
        if not tools:
            self._say(f"personality {current} has no tools")
            return
        width = max(len(tool.name) for tool in tools)
        lines = [f"  {t.name.ljust(width)}  {first_line(t.description)}" for t in tools]
        self._say(f"tools of {current}:\n" + "\n".join(lines))
