"""`runner.end_process`: a finished one-shot ends without the interpreter's teardown, but
never while a thread that is not a daemon still runs (its work would be cut off)."""

from __future__ import annotations

import subprocess
import sys
import threading

from seam.apps.cli.runner import end_process


def test_it_returns_while_a_non_daemon_thread_runs() -> None:
    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=False)
    worker.start()
    try:
        end_process(0)  # returns: the caller exits the usual way
    finally:
        release.set()
        worker.join()


def test_it_ends_the_process_with_the_code_after_atexit_and_flushing() -> None:
    code = (
        "import atexit, sys\n"
        "from seam.apps.cli.runner import end_process\n"
        "atexit.register(lambda: sys.stdout.write('atexit ran\\n'))\n"
        "sys.stdout.write('answer')\n"  # no newline: only a flush gets it out
        "end_process(3)\n"
        "sys.stdout.write('not reached')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 3
    assert done.stdout == "answeratexit ran\n"
