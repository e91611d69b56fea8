"""What every command shares: the runtime, the event loop, Ctrl-C, and how failures end.

A failure anywhere ends the same way: one `seam: <reason>` line on stderr and an exit
code a script can rely on (1: it did not work, 2: bad usage or config, 130: Ctrl-C).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from seam.apps.cli.render import terminal_safe
from seam.contracts.events import AgentEvent, Done, ToolApprovalRequired
from seam.contracts.guardrail import ApprovalDecision
from seam.contracts.model import OnRetry
from seam.contracts.tools import CancelToken

if TYPE_CHECKING:
    from seam.wiring.runtime import Runtime

FAILURE = 1
USAGE = 2
INTERRUPTED = 130
# After the first Ctrl-C a turn gets this long to stop at its next step (keeping the
# transcript tidy) before it is abandoned: a stalled model sends no next chunk to stop at.
CANCEL_GRACE = 1.0


class CliError(Exception):
    def __init__(self, message: str, code: int = FAILURE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class TurnTimedOut(CliError):
    """The turn ran past its deadline (`--timeout`, `[agent] turn_timeout`) and was stopped."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"timed out: the turn took longer than {seconds:g} s and was stopped"
            " (--timeout or [agent] turn_timeout sets the limit; 0 means none)"
        )
        self.seconds = seconds


def say_error(message: str) -> None:
    """The one-line failure report (a multi-line reason is folded onto one line)."""
    sys.stderr.write(f"seam: {terminal_safe(' '.join(message.split()))}\n")
    sys.stderr.flush()


def execute(main: Coroutine[Any, Any, int]) -> None:
    """Run a command's coroutine and exit with its code, reporting failures as one line."""
    import typer

    from seam.wiring.logs import configure_logging
    from seam.wiring.settings import ConfigError

    configure_logging()
    try:
        code = asyncio.run(main)
    except CliError as exc:
        say_error(exc.message)
        code = exc.code
    except ConfigError as exc:
        say_error(str(exc))
        code = USAGE
    except KeyboardInterrupt:
        say_error("interrupted")
        code = INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`seam sessions list | head`): stop quietly, and keep
        # Python from complaining when it flushes stdout on exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = FAILURE
    except OSError as exc:  # e.g. SEAM_HOME cannot be created
        where = f"{exc.filename}: " if exc.filename else ""
        say_error(f"{where}{exc.strerror or exc}")
        code = FAILURE
    if code:
        raise typer.Exit(code)


def open_runtime(
    model: str | None = None, *, on_retry: OnRetry | None = None, interactive: bool = False
) -> Runtime:
    """The runtime the environment describes, to use as `async with open_runtime() as
    runtime:` (which opens the store and closes everything); raises `ConfigError` for
    bad settings.

    `interactive`: a person waits on each turn (see `create_runtime`); `on_retry` shows
    them the model's retries."""
    from seam.wiring import create_runtime
    from seam.wiring.settings import load_settings

    return create_runtime(
        settings=load_settings(model=model), on_retry=on_retry, interactive=interactive
    )


def turn_time_limit(runtime: Runtime, flag: float | None) -> float | None:
    """Seconds a turn may take: `--timeout`, else `[agent] turn_timeout`; None: no limit."""
    seconds = flag
    if seconds is None:
        settings = runtime.settings
        seconds = settings.config.agent.turn_timeout if settings is not None else 0.0
    return seconds or None


def fresh_session_name(prefix: str) -> str:
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def session_key(runtime: Runtime, name: str) -> str:
    """The key of a public session name; a reserved or malformed name is a usage error."""
    try:
        return runtime.session_key_for(name)
    except ValueError as exc:
        raise CliError(str(exc), USAGE) from None


def check_personality(runtime: Runtime, personality: str) -> None:
    try:
        runtime.personalities.get(personality)
    except KeyError as exc:
        raise CliError(str(exc.args[0] if exc.args else exc), USAGE) from None


APPROVAL_PROMPT = "approve? [o]nce, [s]ession, [a]lways, [d]eny, [n]ever: "
_ANSWERS: dict[str, ApprovalDecision] = {
    "o": "once",
    "once": "once",
    "y": "once",
    "yes": "once",
    "s": "session",
    "session": "session",
    "a": "always",
    "always": "always",
    "d": "deny",
    "deny": "deny",
    "no": "deny",
    "n": "always_deny",
    "never": "always_deny",
}
Approve = Callable[[ToolApprovalRequired], Awaitable[ApprovalDecision]]


def parse_approval(answer: str) -> ApprovalDecision | None:
    """A person's answer to the approval prompt; None when it is not one of the choices."""
    return _ANSWERS.get(answer.strip().lower())


def approval_request_text(event: ToolApprovalRequired) -> str:
    return f"{event.name} wants to run: {event.command}\n  why it needs approval: {event.reason}"


async def run_turn(
    runtime: Runtime,
    session: str,
    text: str,
    *,
    personality: str | None,
    on_event: Callable[[AgentEvent], None],
    approve: Approve | None = None,
    time_limit: float | None = None,
) -> Done | None:
    """Run one turn as a durable submission, handing each event to `on_event`.

    The submission is stored before the model is called, so a crash at any point leaves
    something `seam resume` finishes. Ctrl-C cancels the turn, not the program: the loop
    stops at its next step and the submission settles aborted. A turn that does not stop
    within `CANCEL_GRACE` (or gets a second Ctrl-C) is abandoned; the result is then None.
    After `time_limit` seconds the turn is cancelled the same way (its partial text kept,
    marked interrupted) and `TurnTimedOut` is raised.
    """
    cancel = CancelToken()
    expired = False
    done: Done | None = None
    answering: set[asyncio.Task[None]] = set()

    async def answer(event: ToolApprovalRequired) -> None:
        # Nobody to ask (a script, a pipe with no answers): the safe answer.
        decision = await approve(event) if approve is not None else "deny"
        runtime.respond_to(event.session_key, event.call_id, decision)

    def watch(event: AgentEvent) -> None:
        nonlocal done
        on_event(event)
        if isinstance(event, Done):
            done = event
        elif isinstance(event, ToolApprovalRequired):
            task = asyncio.ensure_future(answer(event))
            answering.add(task)
            task.add_done_callback(answering.discard)

    async def consume() -> None:
        # `Runtime.run` ends with `done` also when the submission settled without its turn
        # streaming here (a reply stored before a crash, another worker ran it).
        async for event in runtime.run(session, text, personality=personality, cancel=cancel):
            watch(event)

    task = asyncio.ensure_future(consume())
    loop = asyncio.get_running_loop()

    def expire() -> None:
        nonlocal expired
        expired = True
        cancel.cancel(f"timed out after {time_limit:g} s")
        loop.call_later(CANCEL_GRACE, task.cancel)

    deadline = loop.call_later(time_limit, expire) if time_limit else None
    try:
        with _ctrl_c_cancels(cancel, task):
            await asyncio.wait((task,))
    finally:
        if deadline is not None:
            deadline.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        # A prompt the turn no longer waits for (it timed out into a deny) must not stay
        # up to compete with the next one.
        for pending in answering:
            pending.cancel()
        await asyncio.gather(*answering, return_exceptions=True)
    if not task.cancelled():
        task.result()  # a crash in the turn surfaces here
    if expired and time_limit and (done is None or done.finish_reason == "cancelled"):
        raise TurnTimedOut(time_limit)
    return done


@contextmanager
def _ctrl_c_cancels(cancel: CancelToken, task: asyncio.Future[None]) -> Iterator[None]:
    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGINT)

    def abandon() -> None:
        if not task.done():
            task.cancel()

    def on_ctrl_c() -> None:
        if cancel.cancelled:
            abandon()
            return
        cancel.cancel("cancelled by the user")
        loop.call_later(CANCEL_GRACE, abandon)

    try:
        loop.add_signal_handler(signal.SIGINT, on_ctrl_c)
        installed = True
    except (NotImplementedError, RuntimeError):  # no signal support here: Ctrl-C as usual
        installed = False
    try:
        yield
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
