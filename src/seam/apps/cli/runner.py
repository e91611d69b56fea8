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
from seam.contracts.events import AgentEvent, Done, ErrorEvent, ToolApprovalRequired
from seam.contracts.guardrail import ApprovalDecision
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


def open_runtime(model: str | None = None) -> Runtime:
    """The runtime the environment describes; raises `ConfigError` for bad settings."""
    from seam.wiring.runtime import create_runtime
    from seam.wiring.settings import load_settings

    return create_runtime(settings=load_settings(model=model))


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
) -> Done | None:
    """Run one turn as a durable submission, handing each event to `on_event`.

    The submission is stored before the model is called, so a crash at any point leaves
    something `seam resume` finishes. Ctrl-C cancels the turn, not the program: the loop
    stops at its next step and the submission settles aborted. A turn that does not stop
    within `CANCEL_GRACE` (or gets a second Ctrl-C) is abandoned; the result is then None.
    """
    cancel = CancelToken()
    done: Done | None = None
    answering: set[asyncio.Task[None]] = set()

    async def answer(event: ToolApprovalRequired) -> None:
        # Nobody to ask (a script, a pipe with no answers): the safe answer.
        decision = await approve(event) if approve is not None else "deny"
        runtime.respond(session, event.call_id, decision)

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
        nonlocal done
        sub = await runtime.ask(
            session, text, personality=personality, on_event=watch, cancel=cancel
        )
        if done is None:
            # Settled without a turn streaming here: a reply stored before a crash, or
            # another worker ran it and its events were not followed.
            finish = sub.finish_reason or ("stop" if sub.outcome == "completed" else "error")
            if sub.outcome == "failed":
                watch(ErrorEvent(sub.session_key, "", 0, "failed", sub.error or "it failed"))
            done = Done(sub.session_key, "", 0, sub.result or "", finish)

    task = asyncio.ensure_future(consume())
    try:
        with _ctrl_c_cancels(cancel, task):
            await asyncio.wait((task,))
    finally:
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
