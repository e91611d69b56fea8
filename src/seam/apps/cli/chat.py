"""`seam chat`: a conversation in the terminal.

On a terminal it reads lines with prompt_toolkit (editing, history in
`$SEAM_HOME/history`); from a pipe it reads plain lines, so a chat can be scripted and
tested. Slash commands never reach the model. Ctrl-C during a turn cancels that turn
only; Ctrl-C at the prompt clears the line; Ctrl-D (or end of input) leaves.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from seam import __version__
from seam.apps.cli.approval import APPROVAL_PROMPT, approval_request_text, parse_approval
from seam.apps.cli.chat_images import PendingImages
from seam.apps.cli.chat_info import InfoCommands
from seam.apps.cli.chat_recall import IdleIndexer
from seam.apps.cli.chat_undo import COMMANDS as UNDO_COMMANDS
from seam.apps.cli.chat_undo import UndoCommands
from seam.apps.cli.exits import USAGE
from seam.apps.cli.images import check_sees_images
from seam.apps.cli.mcp import is_prompt_command, prompt_turn_text
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
from seam.apps.cli.turn_report import turn_report
from seam.apps.cli.workdir import confirm_working_dir, sandbox_banner
from seam.contracts.events import AgentEvent, ToolApprovalRequired
from seam.contracts.guardrail import UNAVAILABLE, ApprovalDecision
from seam.contracts.images import with_placeholders
from seam.contracts.model import OnRetry, RetryNotice

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import History
    from rich.console import Console

    from seam.apps.cli.chat_complete import SlashCompleter
    from seam.wiring.runtime import Runtime

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
    ("/model [NAME]", "show the current and configured models, or switch this chat to NAME"),
    ("/retry", "run your last message again, replacing its answer"),
    ("/tools", "the tools the current personality may use"),
    ("/mcp [reload]", "MCP servers, their state and tools; reload re-reads the config"),
    ("/skills", "the Agent Skills found, and why one is not offered"),
    ("/SKILL-NAME [text]", "run a turn with that skill loaded"),
    ("/SERVER:PROMPT [arg=value]", "run a turn with an MCP server's prompt (listed by /mcp)"),
    ("/cron", "the cron jobs, their schedules and next runs"),
    ("/image FILE", "send an image with your next message"),
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

    async with contextlib.AsyncExitStack() as stack:
        runtime = await stack.enter_async_context(
            open_runtime(model, on_retry=on_retry, interactive=True)
        )
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
        switch = await chat.run()
        while switch is not None:
            stack = await _switch_model(chat, stack, switch, on_retry)
            switch = await chat.run(banner=False)
        await chat.indexer.aclose()
        await stack.aclose()
    return 0


async def _switch_model(
    chat: Chat, stack: contextlib.AsyncExitStack, model: str, on_retry: OnRetry
) -> contextlib.AsyncExitStack:
    """`/model NAME`: the chat's runtime reopened with `model` (the old one is closed only
    once the new one is open: a model that cannot be set keeps the chat as it was)."""
    from seam.wiring.settings import ConfigError

    fresh = contextlib.AsyncExitStack()
    try:
        runtime = await fresh.enter_async_context(
            open_runtime(model, on_retry=on_retry, interactive=True)
        )
    except (CliError, ConfigError) as exc:
        await fresh.aclose()
        chat.say_error(str(exc))
        return stack
    await stack.aclose()
    chat.attach(runtime)
    chat.say_model()
    return fresh


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
        self.indexer = IdleIndexer()  # search by meaning, indexed while the person types
        self._prompt: PromptSession[str] | None = None
        # `/model NAME`: the model the chat asked to switch to (its runner reopens).
        self._switch: str | None = None
        self._commands: dict[str, Callable[[str], Awaitable[None]]] = {
            "/model": self._model,
            "/retry": self._retry,
            "/new": self._new,
            "/resume": self._resume,
            "/personality": self._personality,
            "/help": self._help,
        }
        self.attach(runtime)

    def attach(self, runtime: Runtime) -> None:
        """Talk through `runtime` from now on (at the start, and after `/model NAME`)."""
        self.runtime = runtime
        self._undo = UndoCommands(runtime, lambda: self.session, self._say, self._read_line)
        self._commands.update(self._undo.handlers())
        info = InfoCommands(
            runtime,
            lambda: self.session,
            lambda: self.personality,
            self._current_personality,
            self._say,
            self.style,
            self.console,
        )
        self._commands.update(info.handlers())
        self._images = PendingImages(self._say)  # `/image FILE` (chat_images.py)
        self._commands.update(self._images.handlers())

    async def run(self, *, banner: bool = True) -> str | None:
        """Read and answer until the person leaves (None) or asks for another model (its
        name: the caller reopens the runtime with it and calls `run` again)."""
        if banner:
            await self._banner()
        self._switch = None
        while self._switch is None:
            line = await self._read_line()
            if line is None:
                await self._end_session()
                return None
            line = line.strip()
            if not line:
                continue
            if not line.startswith("/"):
                await self._turn(line)
                continue
            name, _, arg = line.partition(" ")
            if name in ("/exit", "/quit"):
                await self._end_session()
                return None
            handler = self._commands.get(name)
            try:
                if handler is None and is_prompt_command(name):  # an MCP prompt (apps/cli/mcp.py)
                    await self._turn(await prompt_turn_text(self.runtime, name, arg))
                    continue
                if handler is None:
                    await self._skill_turn(name, arg)
                    continue
                await handler(arg.strip())
            except CliError as exc:
                self.say_error(exc.message)
        return self._switch

    def say_error(self, message: str) -> None:
        self._say(self.style.red(f"error: {message}"))

    def say_model(self) -> None:
        from seam.apps.cli.chat_model import current_model

        self._say(self.style.plain(f"model is now {current_model(self.runtime)}"))

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
        self.indexer.poke(self.runtime)
        if self._prompt is None:
            from prompt_toolkit.history import FileHistory

            class RedactedHistory(FileHistory):
                """What is typed is kept for recall, but a pasted key is kept redacted."""

                def store_string(self, string: str) -> None:
                    super().store_string(redact(string) if redact is not None else string)

            settings = self.runtime.settings
            redact = self.runtime.redact
            history = RedactedHistory(str(settings.home / "history")) if settings else None
            self._prompt = self._make_prompt(history)
        try:
            # Not prompt_toolkit's handler: it would print a stray loop failure and wait for
            # Enter, eating the next line; the log's handlers take it (to seam.log).
            return await self._prompt.prompt_async(prompt or "> ", set_exception_handler=False)
        except KeyboardInterrupt:  # Ctrl-C at the prompt: drop the line, ask again
            return ""
        except EOFError:
            return None

    def _make_prompt(self, history: History | None) -> PromptSession[str]:
        """The prompt on a terminal: editing, `history`, and Tab completing the slash
        commands and their arguments (`chat_complete.py`)."""
        from prompt_toolkit import PromptSession

        # Tab completes (a menu only when several choices fit), not every keystroke.
        return PromptSession(
            history=history, completer=self.completer(), complete_while_typing=False
        )

    def completer(self) -> SlashCompleter:
        from seam.apps.cli.chat_complete import SlashCompleter

        def commands() -> list[str]:
            return [name.split(" ")[0] for name, _ in COMMANDS if "SKILL" not in name]

        return SlashCompleter(commands, self._argument_choices)

    def _argument_choices(self, command: str) -> list[str]:
        from seam.apps.cli.chat_model import model_names

        if command == "/model":
            return model_names(self.runtime)
        if command == "/personality":
            return [p.id for p in self.runtime.personalities.list()]
        return {"/mcp": ["reload"], "/dnd": ["on", "off"]}.get(command, [])

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
            extras = self._images.take()
            if extras is not None:
                check_sees_images(self.runtime, self.personality, stored)
                text = with_placeholders(text, extras.images)
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
                extras=extras,
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

    async def _model(self, arg: str) -> None:
        from seam.apps.cli.chat_model import checked_name, model_lines

        if not arg:
            self._say(self.style.plain("\n".join(model_lines(self.runtime))))
            return
        self._switch = checked_name(arg)

    async def _retry(self, arg: str) -> None:
        text = await self._undo.take_back_last()
        if text is not None:
            self._say(self.style.dim(f"retrying: {first_line(text)}"))
            await self._turn(text)

    async def _new(self, arg: str) -> None:
        await self._end_session()
        self.session = fresh_session_name("chat")
        self._say(f"new session {self.session}")

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
