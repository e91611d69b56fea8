"""The checks themselves: a leak in any dress is recognised, the listener keeps what it is
sent, and a leftover process is found by its marker (a check that sees nothing proves
nothing)."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import time

import pytest

from tests.security.conftest import processes_holding
from tests.security.leaks import Canaries
from tests.security.listener import LoopbackListener
from tests.security.machine import canary

SECRET = canary()
CANARIES = Canaries({"the secret": SECRET})
DRESSES = [
    "cat",
    "rev",
    "cut -c3-12",
    "sed 's/./& /g'",
    "sed 's/./&\\n/g'",
    "od -c",
    "xxd",
    "xxd -p",
    "base64",
    "tr a-z A-Z",
    "rev | base64",
    "xxd -p | rev",
]


@pytest.mark.parametrize("dress", DRESSES)
def test_a_secret_is_recognised_however_a_command_prints_it(dress: str) -> None:
    done = subprocess.run(
        ["bash", "-c", dress],
        input=f"KEY={SECRET}\n",
        capture_output=True,
        text=True,
        check=True,
    )
    assert CANARIES.leaks(done.stdout) == ["the secret"], done.stdout


def test_text_without_the_secret_is_clean() -> None:
    """Text of the kinds the checks read (JSON, paths, hex, base64, `od` output)."""
    sample = os.urandom(4096)
    parts = [
        json.dumps({"role": "tool", "content": "exit code 0 (3 ms)\n/tmp/project"}),
        sample.hex(),
        base64.b64encode(sample).decode(),
        "0000000   [   u   s   e   r   ]  \\n  \\t   n   a   m   e",
        "PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp/pytest-of-root/user LANG=C.UTF-8",
        canary(),  # another canary is not this one
    ]
    assert CANARIES.leaks("\n".join(parts)) == []


def test_the_listener_keeps_what_each_connection_sent() -> None:
    with LoopbackListener() as listener:
        with socket.create_connection(("127.0.0.1", listener.port)) as conn:
            conn.sendall(b"first " + SECRET.encode())
        with socket.create_connection(("127.0.0.1", listener.port)) as conn:
            conn.sendall(b"second")
        received = listener.settle()
    assert sorted(received) == sorted([b"first " + SECRET.encode(), b"second"])


def test_a_leftover_process_is_found_by_its_marker() -> None:
    marker = "987654321"
    code = f"import time; time.sleep({marker})"
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        # Right after exec the kernel may not have laid out the new argv yet (the cmdline
        # reads empty for a moment): wait for it to appear, bounded.
        deadline = time.monotonic() + 10
        while child.pid not in processes_holding([marker]):
            assert child.poll() is None, "the marked process ended on its own"
            assert time.monotonic() < deadline, "the marked process was never found"
            os.sched_yield()
    finally:
        child.kill()
        child.wait()
    assert child.pid not in processes_holding([marker])
