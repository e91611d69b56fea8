"""What every command shares: the runtime, the event loop, Ctrl-C, and how failures end.

A failure anywhere ends the same way: one `seam: <reason>` line on stderr and an exit
code a script can rely on (`exits.py` has the table: 1 it did not work, 2 bad usage or
config, 3 the provider failed, 4 halted, 5 an approval nobody could give, 124 the turn's
deadline ran out, 130 Ctrl-C).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from seam.apps.cli.exits import FAILURE, INTERRUPTED, USAGE
from seam.apps.cli.render import json_safe, terminal_safe
from seam.apps.cli.turn_control import CANCEL_GRACE, Approve, TurnControl, TurnResult
from seam.contracts.events import AgentEvent
from seam.contracts.model import OnRetry
from seam.contracts.tools import CancelToken

if TYPE_CHECKING:
    from seam.contracts.execution import Submission
    from seam.contracts.sessions import SessionInfo
    from seam.contracts.turn_extras import TurnExtras
    from seam.wiring.runtime import Runtime


class CliError(Exception):
    def __init__(self, message: str, code: int = FAILURE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def say_error(message: str) -> None:
    """The one-line failure report (a multi-line reason is folded onto one line)."""
    sys.stderr.write(f"seam: {terminal_safe(' '.join(message.split()))}\n")
    sys.stderr.flush()


def execute(
    main: Coroutine[Any, Any, int],
    *,
    json_exit: bool = False,
    surface: str = "cli",
    exit_now: bool = False,
) -> None:
    """Run a command's coroutine and exit with its code, reporting failures as one line.

    `json_exit`: the command streams JSON lines (`seam run --json`); a failure caught
    here still ends the stream with its `exit` line. Each fault the environment can cause
    (config, argv, stdin, a read-only or full SEAM_HOME, a locked or damaged database)
    gets its own line from `faults.describe`; anything else is the backstop: one line
    naming the crash log that holds the traceback. `surface` names the process in each
    structured log line (web, gateway, acp, worker; cli for the rest).

    `exit_now`: the process ends here (`end_process`), when the command is the whole
    process (the `seam` script's one-shot), not a call inside a longer-lived one.
    """
    from seam.apps.cli.log_setup import configure_logging
    from seam.wiring.log_secrets import COMMAND_SECRETS, LogSecrets

    secrets = LogSecrets()
    configure_logging(redact=secrets, surface=surface)
    token = COMMAND_SECRETS.set(secrets)
    try:
        code, message = _outcome(main)
    finally:
        COMMAND_SECRETS.reset(token)
    if message:
        say_error(message)
        if json_exit:
            from seam.apps.cli.exits import TurnReport

            _json_line(TurnReport(code, " ".join(message.split())).exit_line())
    if exit_now:
        end_process(code)
    if code:
        # SystemExit, not typer.Exit: click lets it through unchanged, and `seam run`'s
        # path without Typer (`run_args`) then imports no Typer either.
        raise SystemExit(code)


def end_process(code: int) -> None:
    """End the process with `code` without tearing the interpreter down: freeing every
    module and object of a one-shot costs about 110 ms of CPU (a sixth of a `seam run`)
    and does nothing a process's exit does not. What an exit must do still happens: the
    atexit handlers run (logging's flush and close, weakref finalizers) and stdout and
    stderr are flushed. Returns (the caller exits the usual way) when a thread that is not
    a daemon is still running, or a flush fails (Python then reports it as it would)."""
    main = threading.main_thread()
    if any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate()):
        return
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def _outcome(main: Coroutine[Any, Any, int]) -> tuple[int, str]:
    """The command's exit code, and the one line that says why it failed (or "")."""
    from seam.apps.cli.faults import describe
    from seam.apps.cli.log_setup import write_crash_log
    from seam.wiring.settings import ConfigError

    try:
        return asyncio.run(main), ""
    except CliError as exc:
        return exc.code, exc.message
    except ConfigError as exc:
        return USAGE, str(exc)
    except KeyboardInterrupt:
        return INTERRUPTED, "interrupted"
    except BrokenPipeError:
        # The reader went away (`seam sessions list | head`): stop quietly, and keep
        # Python from complaining when it flushes stdout on exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return FAILURE, ""
    except Exception as exc:
        found = describe(exc)
        if found is not None:
            message, code = found
            return code, message
        where = write_crash_log(exc)
        details = f"details in {where}" if where else "no crash log could be written"
        return FAILURE, f"internal error: {type(exc).__name__}: {exc} ({details})"


def _json_line(payload: dict[str, Any]) -> None:
    import json

    try:
        sys.stdout.write(json_safe(json.dumps(payload, ensure_ascii=False)) + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):  # stdout closed: the stderr line said it already
        pass


@contextlib.asynccontextmanager
async def open_runtime(
    model: str | None = None, *, on_retry: OnRetry | None = None, interactive: bool = False
) -> AsyncIterator[Runtime]:
    """The runtime the environment describes, as `async with open_runtime() as runtime:`
    (which opens the store and closes everything); raises `ConfigError` for bad settings.
    On the way in, submissions a full disk kept from settling are settled failed.

    `interactive`: a person waits on each turn (see `create_runtime`); `on_retry` shows
    them the model's retries."""
    from seam.apps.cli.unsettled import reserve, settle_remembered
    from seam.wiring.configure import create_runtime
    from seam.wiring.log_secrets import COMMAND_SECRETS
    from seam.wiring.settings import load_settings

    settings = load_settings(model=model)
    async with create_runtime(
        settings=settings, on_retry=on_retry, interactive=interactive
    ) as runtime:
        secrets = COMMAND_SECRETS.get()
        if secrets is not None:  # the logs redact as the runtime does: no second read
            secrets.adopt(runtime.redact)
        reserve(runtime)
        await settle_remembered(runtime)
        yield runtime


def turn_time_limit(runtime: Runtime, flag: float | None) -> float | None:
    """Seconds a turn may take: `--timeout`, else `[agent] turn_timeout`; None: no limit."""
    seconds = flag
    if seconds is None:
        settings = runtime.settings
        seconds = settings.config.agent.turn_timeout if settings is not None else 0.0
    return seconds or None


def fresh_session_name(prefix: str) -> str:
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def require_utf8(text: str, what: str) -> str:
    """`text` itself, or a usage error when it holds bytes that are not UTF-8 (Python
    hands undecodable argv bytes over as lone surrogates, which no store can keep)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        byte = f"byte 0x{ord(bad) - 0xDC00:02x}" if 0xDC80 <= ord(bad) <= 0xDCFF else repr(bad)
        raise CliError(
            f"{what} is not valid UTF-8 ({byte} at position {exc.start}); pass it as UTF-8"
            " text (check the terminal's encoding, e.g. LANG=C.UTF-8)",
            USAGE,
        ) from None
    return text


def check_session_name(name: str | None) -> None:
    """A session name given on the command line must be UTF-8 (None: none given)."""
    if name is not None:
        require_utf8(name, "the session name")


def session_key(runtime: Runtime, name: str) -> str:
    """The key of a public session name; a reserved or malformed name is a usage error."""
    check_session_name(name)
    try:
        return runtime.session_key_for(name)
    except ValueError as exc:
        raise CliError(str(exc), USAGE) from None


def check_personality(runtime: Runtime, personality: str) -> None:
    try:
        runtime.personalities.get(personality)
    except KeyError as exc:
        raise CliError(str(exc.args[0] if exc.args else exc), USAGE) from None


def unknown_tools(runtime: Runtime) -> dict[str, list[str]]:
    """Every personality's toolset names no registered tool answers to, by personality."""
    known = set(runtime.tools.names())
    found: dict[str, list[str]] = {}
    for personality in runtime.personalities.list():
        missing = [n for n in personality.toolset or () if _checkable(n) and n not in known]
        if missing:
            found[personality.id] = missing
    return found


def _checkable(name: str) -> bool:
    """A plain built-in name: a glob pattern matches what it matches, and an MCP tool
    (`mcp__<server>__<tool>`) is known only once its server has started."""
    return not name.startswith("mcp__") and {"*", "?", "["}.isdisjoint(name)


def warn_unknown_tools(runtime: Runtime) -> None:
    """For surfaces nobody watches turn by turn (`seam resume`, `seam worker`): one line
    per personality whose toolset names unknown tools (its turns run without them)."""
    for pid, names in unknown_tools(runtime).items():
        listed = ", ".join(repr(name) for name in names)
        say_error(f"warning: personality {pid!r} names unknown tools in its toolset: {listed}")


def check_toolset(runtime: Runtime, stored: SessionInfo | None, personality: str | None) -> None:
    """A usage error naming every tool in the personality's `toolset` that no registered
    tool answers to (the registry would skip them, and the agent would silently lack them).
    The personality is `personality`, else the session's own (`stored`: its row; None for
    a new session), else the default one.
    """
    chosen = personality or (stored.personality if stored is not None else None)
    pid = chosen or runtime.personalities.default_id
    try:
        found = runtime.personalities.get(pid)
    except KeyError as exc:
        raise CliError(str(exc.args[0] if exc.args else exc), USAGE) from None
    if found.toolset is None:
        return
    known = set(runtime.tools.names())
    unknown = [name for name in found.toolset if _checkable(name) and name not in known]
    if not unknown:
        return
    settings = runtime.settings
    where = f" ({settings.personalities_dir / pid / 'config.toml'})" if settings else ""
    names = ", ".join(repr(name) for name in unknown)
    plural = "s" if len(unknown) > 1 else ""
    raise CliError(
        f"personality {pid!r}{where}: unknown tool{plural} {names} in its toolset; remove"
        f" {'them' if plural else 'it'} or fix the spelling (known tools: "
        f"{', '.join(sorted(known))})",
        USAGE,
    )


async def run_turn(
    runtime: Runtime,
    key: str,
    text: str,
    *,
    personality: str | None,
    on_event: Callable[[AgentEvent], None],
    approve: Approve | None = None,
    time_limit: float | None = None,
    stored: SessionInfo | None = None,
    extras: TurnExtras | None = None,
) -> TurnResult:
    """Run one turn in the session stored under `key` (`session_key`; `stored`: its row
    when the caller read it) as a durable submission, handing each event to `on_event`.

    The submission is stored before the model is called, so a crash at any point leaves
    something `seam resume` finishes. Ctrl-C stops the turn, and stopping means stopping:
    the loop stops at its next step, the submission is asked to abort (a queued one, e.g.
    waiting out a retry back-off, settles aborted at once) and settles aborted with its
    partial text kept, so nothing runs it later. A turn that does not stop within
    `CANCEL_GRACE` (or gets a second Ctrl-C) is abandoned, and still settles aborted.
    After `time_limit` seconds the turn is stopped the same way and `timed_out` is set.
    `approve` answers approval requests; without one (or when it says `unavailable`) the
    model is told no one was available to approve.
    """
    cancel = CancelToken()
    result = TurnResult(secrets.token_hex(8))
    control = TurnControl(runtime, result, cancel, on_event, approve)
    task = asyncio.ensure_future(
        runtime.ask_key(
            key,
            text,
            personality=personality,
            submission_id=result.submission_id,
            on_event=control.watch,
            cancel=cancel,
            stored=stored,
            extras=extras,
        )
    )
    loop = asyncio.get_running_loop()
    deadline = loop.call_later(time_limit, control.expire, task, time_limit) if time_limit else None
    try:
        with _ctrl_c_cancels(cancel, task, control.on_stop):
            await asyncio.wait((task,))
            await asyncio.gather(*control.aborting, return_exceptions=True)
    finally:
        await control.wind_down(task, deadline)
    return await _settled(runtime, result, task)


async def _settled(
    runtime: Runtime, result: TurnResult, task: asyncio.Future[Submission]
) -> TurnResult:
    """Fill in the submission as it settled, or re-raise the turn's crash (noting a full
    disk first, so the next command settles it failed instead of running it again)."""
    if task.cancelled():
        # Abandoned: the coordinator settled it aborted as it let go; read it back.
        result.submission = await _read_back(runtime, result.submission_id)
        return result
    exc = task.exception()
    if exc is not None:
        _note_if_disk_full(runtime, result.submission_id, exc)
        raise exc  # a crash in the turn (or the store) surfaces here
    result.submission = task.result()
    return result


def _note_if_disk_full(runtime: Runtime, submission_id: str, exc: BaseException) -> None:
    """A turn the store could not even settle because the disk is full is noted, so the
    next command settles it failed instead of running it again (`unsettled.py`)."""
    from seam.apps.cli.faults import is_disk_full
    from seam.apps.cli.unsettled import remember

    if is_disk_full(exc):
        remember(runtime, submission_id, "the disk was full: the turn could not be saved")


async def _read_back(runtime: Runtime, submission_id: str) -> Submission | None:
    try:
        sub = await runtime.abort(submission_id)  # settled ones come back unchanged
    except KeyError:
        return None
    return sub if sub.state == "settled" else None


@contextmanager
def _ctrl_c_cancels(
    cancel: CancelToken, task: asyncio.Future[Any], on_stop: Callable[[], None]
) -> Iterator[None]:
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
        on_stop()
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
