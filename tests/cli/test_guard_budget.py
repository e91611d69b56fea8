"""`seam guard check` stays within a small budget for adversarial input.

Each check runs `seam guard check` as a subprocess under a 1 GiB address-space limit (so a
runaway analysis fails in the child instead of exhausting the host) and measures the
child's peak memory with `wait4`: the adversarial commands must cost at most a few MB
more than checking `ls`, answer "needs approval" (exit 1), and do it quickly.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.conftest import SEAM

ADDRESS_SPACE = 1 << 30
EXTRA_MEMORY = 8 * 1024 * 1024  # bytes over the `ls` baseline that a check may use
DOUBLINGS = "a=x; " + "a=$a$a; " * 30  # 2**30 characters if expanded

ADVERSARIAL = {
    "doubling-echo": DOUBLINGS + "echo $a",
    "doubling-rm": DOUBLINGS + "rm $a",
    "nested-substitutions": "$(" * 3000 + "ls" + ")" * 3000,
    "nested-quotes": "echo " + '"$(echo ' * 2000 + "x" + ')"' * 2000,
    "nested-ifs": "if true; then " * 2000 + "ls" + "; fi" * 2000,
    "huge-heredoc": "cat <<EOF\n" + ("x" * 79 + "\n") * 2500 + "EOF",
    "heredoc-of-substitutions": "cat <<EOF\n" + "$(ls) " * 30000 + "\nEOF",
    "oversized-heredoc": "cat <<EOF\n" + "x" * 5_000_000 + "\nEOF",
    "many-commands": "ls;" * 60000,
}


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def check(tmp_path: Path, command: str) -> tuple[int, str, int, float]:
    """(exit code, stdout, peak RSS in bytes, seconds) of `seam guard check -`."""
    env = {**os.environ, "HOME": str(tmp_path), "SEAM_HOME": str(tmp_path / ".seam")}
    stdin = tmp_path / "command.txt"
    stdin.write_text(command)
    started = time.monotonic()
    with stdin.open("rb") as source:
        child = subprocess.Popen(
            [str(SEAM), "guard", "check", "-"],
            stdin=source,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=tmp_path,
            preexec_fn=limited,
        )
        assert child.stdout is not None
        output = child.stdout.read().decode()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, output, usage.ru_maxrss * 1024, time.monotonic() - started


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> int:
    code, output, peak, _ = check(tmp_path_factory.mktemp("baseline"), "ls")
    assert code == 0, output
    return peak


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_adversarial_commands_are_judged_within_budget(
    tmp_path: Path, baseline: int, name: str
) -> None:
    command = ADVERSARIAL[name]
    code, output, peak, seconds = check(tmp_path, command)
    assert code == 1, output  # needs approval
    assert "rule: budget:exceeded" in output or "rule: parse:" in output, output
    # The input itself is in memory once or twice; the analysis adds only a few MB.
    assert peak - baseline < EXTRA_MEMORY + 2 * len(command), (peak, baseline)
    assert seconds < 15, seconds  # a whole process start; the analysis is ~10 ms of CPU
