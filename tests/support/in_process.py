"""`seam` run inside the test process, as a subprocess would see the world.

A `seam` subprocess costs 1.6 to 2 s, almost all of it importing; inside the test process
the imports are paid once per worker and a command costs what its work costs. For each
call this gives the command what a process of its own would have, and takes it back
afterwards, so nothing leaks from one call to the next:

- its own environment (`os.environ` is replaced for the call and restored) and working
  directory;
- stdin as a real pipe (a FIFO, not a terminal, as `subprocess.run(input=...)` gives),
  stdout and stderr captured as bytes with the encodings and error handlers Python gives
  a process on a UTF-8 locale (stdout strict, stderr backslashreplace);
- Python's default warning filters (a warning the command emits lands on its stderr);
- the root logger without the handlers `seam` installs (it installs its own on this
  call's stderr), then its handlers and level as they were; the signal handlers too;
- the per-process memos of `seam` itself reset (`_PROCESS_MEMOS`).

The exit code is what the process would have exited with: `SystemExit`'s code, 1 with a
traceback on stderr for an exception that escapes, as the interpreter does.

Use a subprocess (`Cli.spawn`/`Cli.popen`) where the process is the point: signals,
SIGKILL, a closed fd 0, a terminal, `seam worker`, import cost.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

# What a fresh interpreter started without -W or PYTHONWARNINGS filters (innermost last,
# as `warnings.filters` lists them: the first match wins, so the list is reversed below).
_DEFAULT_WARNING_FILTERS: tuple[tuple[str, type[Warning], str], ...] = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, ""),
    ("ignore", PendingDeprecationWarning, ""),
    ("ignore", ImportWarning, ""),
    ("ignore", ResourceWarning, ""),
)
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE)


def _reset_warned_windows() -> None:
    from seam.core import compression

    compression._warned.clear()


# State `seam` keeps for the life of its process (a warning said once per process): a new
# process starts without it.
_PROCESS_MEMOS: tuple[Callable[[], None], ...] = (_reset_warned_windows,)


def run_seam(
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    stdin: str | bytes | None = None,
) -> subprocess.CompletedProcess[str]:
    """`seam *args` in this process; stdout and stderr decoded as UTF-8 (strictly, as
    `subprocess.run(encoding="utf-8")` does). `stdin` None: an empty pipe."""
    from seam.apps.cli.entry import main

    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", errors="strict", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True)
    data = stdin.encode("utf-8") if isinstance(stdin, str) else (stdin or b"")
    with _fed_pipe(data) as reader, _as_a_process(env, cwd, reader, stdout, stderr):
        code = _exit_code(lambda: main(list(args)), stderr)
    return subprocess.CompletedProcess(
        ["seam", *args], code, out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8")
    )


def _exit_code(command: Callable[[], int], stderr: io.TextIOWrapper) -> int:
    """The code the interpreter would exit with after running `command` as `main()`."""
    try:
        return command()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        stderr.write(f"{exc.code}\n")
        return 1
    except Exception as exc:  # what escapes `main` is a traceback and exit 1
        traceback.print_exception(exc, file=stderr)
        return 1


@contextlib.contextmanager
def _fed_pipe(data: bytes) -> Iterator[io.TextIOWrapper]:
    """The read end of a pipe holding `data`, then end of input: a thread writes it, so
    input larger than the pipe's buffer never blocks the command that reads it."""
    read_fd, write_fd = os.pipe()

    def feed() -> None:
        left = memoryview(data)
        try:
            while left:
                left = left[os.write(write_fd, left) :]
        except BrokenPipeError:
            pass  # the command finished without reading it all, as a process may
        finally:
            os.close(write_fd)

    feeder = threading.Thread(target=feed, name="seam-stdin", daemon=True)
    feeder.start()
    reader = open(read_fd, encoding="utf-8", errors="strict")  # noqa: SIM115
    try:
        yield reader
    finally:
        reader.close()  # the feeder gets EPIPE if the command left input unread
        feeder.join(timeout=10)


@contextlib.contextmanager
def _as_a_process(
    env: Mapping[str, str],
    cwd: Path,
    stdin: io.TextIOWrapper,
    stdout: io.TextIOWrapper,
    stderr: io.TextIOWrapper,
) -> Iterator[None]:
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    saved_signals = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    for reset in _PROCESS_MEMOS:
        reset()
    # A new process starts without the handlers `seam` adds (an earlier in-process call
    # or test may have left some): its own are added to its own stderr.
    root.handlers[:] = [h for h in saved_handlers if not getattr(h, "_seam", False)]
    root.setLevel(logging.WARNING)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    try:
        with warnings.catch_warnings():
            warnings.resetwarnings()
            for action, category, module in reversed(_DEFAULT_WARNING_FILTERS):
                warnings.filterwarnings(action, category=category, module=module)  # type: ignore[arg-type]
            yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for handler in root.handlers:
            if handler not in saved_handlers:
                handler.close()
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        for sig, previous in saved_signals.items():
            if previous is not None:
                signal.signal(sig, previous)
        for reset in _PROCESS_MEMOS:
            reset()
