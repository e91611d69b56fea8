"""What the `seam gateway` subprocess tests share: a fake platform server started as its
own process, waiting on a condition while watching the gateway, and stopping it."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# How long a test waits for the gateway to do what it should (a slow CI machine included).
WAIT = 40.0


@contextmanager
def fake_process(module: str) -> Iterator[str]:
    """Run `python -m <module>` (it prints its port) and yield its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", module], stdout=subprocess.PIPE, text=True, cwd=REPO
    )
    assert process.stdout is not None
    port = int(process.stdout.readline())
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def wait_for(
    condition: Callable[[], bool], what: str, process: subprocess.Popen[str], wait: float = WAIT
) -> None:
    """Poll `condition` until it holds; fail at once if the gateway exits, or after `wait`."""
    deadline = time.monotonic() + wait
    while not condition():
        if process.poll() is not None:
            _, err = process.communicate()
            raise AssertionError(f"seam gateway exited ({process.returncode}): {err}")
        if time.monotonic() > deadline:
            err = stop(process)  # what the gateway logged says why
            raise AssertionError(f"timed out waiting for {what}; the gateway said: {err[-3000:]}")
        time.sleep(0.1)


def stop(process: subprocess.Popen[str]) -> str:
    """SIGTERM the gateway (SIGKILL if it does not stop in 30 s); its stderr."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
    return err


def sql(db: Path, statement: str) -> None:
    """Run one statement on the gateway's own SQLite file from a second connection (how a
    test injects a real store fault: a trigger that refuses a write)."""
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(statement)
    conn.close()
