"""What both sandboxes share: process groups, output capture, env filtering, background jobs.

A backend only says how a shell command becomes an argv (`GroupSandbox._argv`); running it
in its own process group, capping and spilling its output, killing the whole group on a
timeout or a cancellation, and keeping a table of background processes live here, so
the local and the bubblewrap sandboxes cannot drift apart on any of it.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import re
import secrets
import signal
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from fnmatch import translate
from pathlib import Path

from seam.contracts.sandbox import CommandResult, ProcessInfo, SandboxError

log = logging.getLogger(__name__)

# `spill(name, text) -> path`: saves a command's full output; the caller picks where.
SpillWriter = Callable[[str, str], Awaitable[str]]

TIMEOUT_EXIT_CODE = 124  # what coreutils' `timeout` returns; models know it
_CHUNK = 65536
_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"

# Variables a command may see from the base environment; everything else is dropped.
SAFE_ENV: tuple[str, ...] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "COLORTERM",
    "TMPDIR",
    "TZ",
)
# Never passed, whoever asks: names that look like credentials (matched upper-cased).
SECRET_ENV: tuple[str, ...] = (
    "*_API_KEY",
    "*_API_KEYS",
    "*APIKEY*",
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*CREDENTIAL*",
    "*PRIVATE_KEY*",
    "*AUTH*",  # also SSH_AUTH_SOCK: the agent socket unlocks the person's keys
    "*_DSN",
    "DATABASE_URL",
    "AWS_*",
    "AZURE_*",
    "OPENAI_*",
    "ANTHROPIC_*",
    "GEMINI_*",
    "GROQ_*",
    "MISTRAL_*",
    "OPENROUTER_*",
    "HF_*",
    "HUGGING*",
    "GH_*",
    "GITHUB_*",
    "SEAM_*",
)


def _glob_regex(globs: Iterable[str]) -> re.Pattern[str]:
    return re.compile("|".join(translate(g) for g in globs))


_SAFE = _glob_regex(SAFE_ENV)
_SECRET = _glob_regex(SECRET_ENV)


def is_secret(name: str) -> bool:
    return _SECRET.match(name.upper()) is not None


def filter_env(base: Mapping[str, str], *, pass_env: Iterable[str] = ()) -> dict[str, str]:
    """The safe subset of `base`: allowed names (plus `pass_env` globs), secrets never."""
    allowed = _SAFE if not pass_env else _glob_regex((*SAFE_ENV, *pass_env))
    env = {k: v for k, v in base.items() if allowed.match(k) and not is_secret(k)}
    env.setdefault("PATH", _DEFAULT_PATH)
    return env


@dataclass(frozen=True, slots=True)
class SandboxOptions:
    timeout: float = 180.0  # seconds a foreground command may run
    output_limit: int = 50_000  # characters of output kept in a result (head + tail)
    spill_limit: int = 10_000_000  # characters kept for the spill file, so memory stays bounded
    kill_grace: float = 2.0  # seconds between SIGTERM and SIGKILL
    buffer_limit: int = 50_000  # characters of unread output kept per background process
    max_processes: int = 16  # background processes kept in the table
    pass_env: tuple[str, ...] = ()  # extra base-env names (globs) commands may see

    def __post_init__(self) -> None:
        for name in ("timeout", "kill_grace"):
            if not getattr(self, name) > 0:
                raise ValueError(f"SandboxOptions.{name} must be positive")
        for name in ("output_limit", "spill_limit", "buffer_limit", "max_processes"):
            if getattr(self, name) < 1:
                raise ValueError(f"SandboxOptions.{name} must be at least 1")


def default_shell() -> str:
    return "/bin/bash" if Path("/bin/bash").exists() else "/bin/sh"


class Capture:
    """A stream's head and tail within `limit` characters, and (optionally) the whole of it,
    up to `full_limit`, for spilling."""

    __slots__ = (
        "_decoder",
        "_full",
        "_full_len",
        "_full_limit",
        "_head",
        "_head_len",
        "_head_limit",
        "_tail",
        "_tail_len",
        "_tail_limit",
        "total",
    )

    def __init__(self, limit: int, full_limit: int = 0) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self._full: list[str] | None = [] if full_limit else None
        self._full_len = 0
        self._full_limit = full_limit
        self.total = 0

    def feed(self, data: bytes) -> None:
        self._add(self._decoder.decode(data))

    def finish(self) -> None:
        self._add(self._decoder.decode(b"", final=True))

    def _add(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        full = self._full
        if full is not None and self._full_len < self._full_limit:
            full.append(text)
            self._full_len += len(text)
        room = self._head_limit - self._head_len
        if room > 0:
            part = text[:room]
            self._head.append(part)
            self._head_len += len(part)
            text = text[room:]
            if not text:
                return
        tail = self._tail
        tail.append(text)
        self._tail_len += len(text)
        while self._tail_len - len(tail[0]) >= self._tail_limit:
            self._tail_len -= len(tail.popleft())

    @property
    def truncated(self) -> bool:
        return self.total > self._head_len + self._tail_limit

    def text(self) -> str:
        head = "".join(self._head)
        tail = "".join(self._tail)
        if not self.truncated:
            return head + tail
        dropped = self.total - self._head_len - self._tail_limit
        return (
            f"{head}\n[... {dropped:,} of {self.total:,} characters omitted ...]\n"
            f"{tail[-self._tail_limit :]}"
        )

    def full(self) -> str:
        text = "".join(self._full or ())
        if self.total > len(text):
            text += f"\n[... the last {self.total - len(text):,} characters were not kept ...]\n"
        return text


class OutputRing:
    """A background process's recent output, addressed by absolute offsets so each reader
    can ask for what is new since it last looked."""

    __slots__ = ("_decoder", "_limit", "_parts", "_start", "end")

    def __init__(self, limit: int) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._limit = limit
        self._parts: deque[str] = deque()
        self._start = 0  # offset of the first character still kept
        self.end = 0

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final=final)
        if not text:
            return
        parts = self._parts
        parts.append(text)
        self.end += len(text)
        while self.end - self._start - len(parts[0]) >= self._limit:
            self._start += len(parts.popleft())

    def read(self, offset: int) -> str:
        """Everything from `offset` on, with a note when part of it was already dropped."""
        kept = "".join(self._parts)
        if offset >= self._start:
            return kept[offset - self._start :]
        return f"[... {self._start - offset:,} characters dropped ...]\n{kept}"


def signal_group(pgid: int, sig: int) -> bool:
    """Signal a whole process group; False when nothing is left in it."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # the pid was reused by someone else's group: not ours to kill
        return False
    return True


async def stop_group(
    proc: asyncio.subprocess.Process, reader: asyncio.Future[None], grace: float
) -> None:
    """SIGTERM the group, give it `grace` seconds to exit and close its output, then SIGKILL."""
    signal_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(grace):
            await proc.wait()
            # End of output means every process that held it has gone.
            await asyncio.wait((reader,))
    signal_group(proc.pid, signal.SIGKILL)
    await proc.wait()


async def _pump(stream: asyncio.StreamReader, sink: Callable[[bytes], None]) -> None:
    while chunk := await stream.read(_CHUNK):
        sink(chunk)


async def _settle(reader: asyncio.Task[None], grace: float) -> bool:
    """Wait up to `grace` for the end of output; False (and stop reading) if it never came."""
    done, _ = await asyncio.wait((reader,), timeout=grace)
    if done:
        return True
    reader.cancel()
    await asyncio.gather(reader, return_exceptions=True)
    return False


class _Background:
    __slots__ = ("command", "id", "proc", "read_at", "ring", "started_at", "task")

    def __init__(
        self, id: str, command: str, proc: asyncio.subprocess.Process, started_at: float, limit: int
    ) -> None:
        self.id = id
        self.command = command
        self.proc = proc
        self.started_at = started_at
        self.ring = OutputRing(limit)
        self.read_at = 0
        self.task = asyncio.ensure_future(self._collect())

    async def _collect(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        await _pump(stdout, self.ring.feed)
        self.ring.feed(b"", final=True)
        await self.proc.wait()

    def info(self) -> ProcessInfo:
        code = self.proc.returncode
        return ProcessInfo(
            self.id, self.command, self.proc.pid, code is None, code, self.started_at
        )


class GroupSandbox:
    """Runs each command in a new process group in the working directory.

    Subclasses supply `name` and `_argv`. Commands see only the filtered base environment
    (plus the caller's variables, secrets dropped), never the runtime's own.
    """

    name = "sandbox"

    def __init__(
        self,
        working_dir: str,
        *,
        base_env: Mapping[str, str],
        options: SandboxOptions | None = None,
        clock: Callable[[], float] = time.time,
        shell: str | None = None,
    ) -> None:
        real = os.path.realpath(working_dir)
        if not Path(real).is_dir():
            raise SandboxError(f"working directory {working_dir!r} does not exist")
        self._working_dir = real
        self._options = options or SandboxOptions()
        self._env = filter_env(base_env, pass_env=self._options.pass_env)
        self._clock = clock
        self._shell = shell or default_shell()
        self._running: dict[asyncio.subprocess.Process, asyncio.Task[None]] = {}
        self._jobs: dict[str, _Background] = {}
        self._job_count = 0
        self._closed = False

    @property
    def working_dir(self) -> str:
        return self._working_dir

    def _argv(self, command: str, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        """The argv that runs `command` through the shell, and the env to start it with."""
        raise NotImplementedError

    async def _spawn(
        self, command: str, env: Mapping[str, str] | None
    ) -> asyncio.subprocess.Process:
        if self._closed:
            raise SandboxError("the sandbox is closed")
        if not isinstance(command, str) or not command.strip():
            raise SandboxError("the command is empty")
        merged = self._env
        if env:
            merged = {**merged, **{k: v for k, v in env.items() if not is_secret(k)}}
        argv, proc_env = self._argv(command, merged)
        try:
            return await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                cwd=self._working_dir,
                env=proc_env,
                start_new_session=True,
            )
        except OSError as exc:
            raise SandboxError(f"could not start {argv[0]}: {exc.strerror or exc}") from None

    async def run(
        self,
        command: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - enforced on the process group
        env: Mapping[str, str] | None = None,
        spill: SpillWriter | None = None,
    ) -> CommandResult:
        options = self._options
        limit = options.timeout if timeout is None else timeout
        if not limit > 0:
            raise SandboxError(f"timeout must be positive, got {timeout}")
        started = time.perf_counter()
        proc = await self._spawn(command, env)
        capture = Capture(options.output_limit, options.spill_limit if spill else 0)
        assert proc.stdout is not None
        reader = asyncio.ensure_future(_pump(proc.stdout, capture.feed))
        self._running[proc] = reader
        notes: list[str] = []
        timed_out = False
        try:
            try:
                async with asyncio.timeout(limit):
                    await proc.wait()
            except TimeoutError:
                timed_out = True
                notes.append(f"[timed out after {limit:g} s; the process group was killed]")
                await stop_group(proc, reader, options.kill_grace)
            else:
                # Leftovers in the group (`server &`) would outlive the call: stop them.
                if signal_group(proc.pid, 0):
                    notes.append(
                        "[stopped the background processes it left running; "
                        "run long-lived commands in background mode]"
                    )
                    await stop_group(proc, reader, options.kill_grace)
            if not await _settle(reader, options.kill_grace):
                notes.append("[output cut: a process that left the group still holds it open]")
        except BaseException:
            # Cancelled (or failed) mid-run: never leave the group behind.
            signal_group(proc.pid, signal.SIGKILL)
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await proc.wait()
                await asyncio.gather(reader, return_exceptions=True)
            raise
        finally:
            self._running.pop(proc, None)
        capture.finish()
        output = capture.text()
        spill_path = None
        if capture.truncated and spill is not None:
            try:
                spill_path = await spill(f"cmd-{secrets.token_hex(4)}.log", capture.full())
            except Exception as exc:  # the command already ran: keep its result whatever
                log.warning("could not spill command output: %s", exc)
                notes.append(f"[full output not saved: {exc}]")
        if notes:
            output = "\n".join((output.rstrip("\n"), *notes)) if output else "\n".join(notes)
        code = TIMEOUT_EXIT_CODE if timed_out else proc.returncode
        assert code is not None
        return CommandResult(
            exit_code=code,
            output=output,
            duration_ms=(time.perf_counter() - started) * 1000,
            timed_out=timed_out,
            truncated=capture.truncated,
            spill_path=spill_path,
        )

    async def start(self, command: str, *, env: Mapping[str, str] | None = None) -> ProcessInfo:
        self._make_room()
        proc = await self._spawn(command, env)
        self._job_count += 1
        job = _Background(
            f"p{self._job_count}", command, proc, self._clock(), self._options.buffer_limit
        )
        self._jobs[job.id] = job
        return job.info()

    def _make_room(self) -> None:
        limit = self._options.max_processes
        if len(self._jobs) < limit:
            return
        for job in self._jobs.values():  # oldest first
            if job.task.done():
                del self._jobs[job.id]
                return
        raise SandboxError(f"{limit} background processes are running; kill one first")

    def _job(self, process_id: str) -> _Background:
        job = self._jobs.get(process_id)
        if job is None:
            known = ", ".join(self._jobs) or "none"
            raise SandboxError(f"no background process {process_id!r} (known: {known})")
        return job

    async def processes(self) -> list[ProcessInfo]:
        return [job.info() for job in self._jobs.values()]

    async def poll(self, process_id: str) -> tuple[ProcessInfo, str]:
        job = self._job(process_id)
        ring = job.ring
        text = ring.read(job.read_at)
        job.read_at = ring.end
        return job.info(), text

    async def kill(self, process_id: str) -> ProcessInfo:
        job = self._job(process_id)
        if not job.task.done():
            await stop_group(job.proc, job.task, self._options.kill_grace)
            await _settle(job.task, self._options.kill_grace)
        return job.info()

    async def aclose(self) -> None:
        self._closed = True
        grace = self._options.kill_grace
        stops = [stop_group(proc, reader, grace) for proc, reader in self._running.items()]
        jobs = [job for job in self._jobs.values() if not job.task.done()]
        stops += [stop_group(job.proc, job.task, grace) for job in jobs]
        await asyncio.gather(*stops)
        for job in jobs:
            await _settle(job.task, grace)


class GroupSandboxProvider:
    """One sandbox per (session, working dir, network), kept so background processes
    outlive the turn that started them. Subclasses say how to build one (`_make`)."""

    def __init__(
        self,
        *,
        base_env: Mapping[str, str],
        options: SandboxOptions | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._base_env = dict(base_env)
        self._options = options or SandboxOptions()
        self._clock = clock
        self._sandboxes: dict[tuple[str, str, bool], GroupSandbox] = {}

    def _make(self, working_dir: str, network: bool) -> GroupSandbox:
        raise NotImplementedError

    def for_session(self, session_key: str, *, working_dir: str, network: bool) -> GroupSandbox:
        key = (session_key, working_dir, network)
        sandbox = self._sandboxes.get(key)
        if sandbox is None:
            sandbox = self._sandboxes[key] = self._make(working_dir, network)
        return sandbox

    async def aclose(self) -> None:
        sandboxes = list(self._sandboxes.values())
        self._sandboxes.clear()
        await asyncio.gather(*(sandbox.aclose() for sandbox in sandboxes))
