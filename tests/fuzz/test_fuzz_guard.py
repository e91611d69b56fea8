"""The command guard on arbitrary shell text: no exception, bounded CPU time, and a
command wrapped in `sh -c '...'` is never judged safer than the command itself."""

from __future__ import annotations

import shlex
import time

from hypothesis import assume, example, given
from hypothesis import strategies as st

from seam.plugins.guardrail.classifier import CommandClassifier

SEVERITY = {"safe": 0, "needs_approval": 1, "forbidden": 2}
GUARD = CommandClassifier(home="/home/me", protected=("/home/me/.seam",))
# The same rules with a CPU budget a loaded machine never exhausts: an example that ran
# out of time once (needs approval) and not the next would make the comparison flaky.
UNHURRIED = CommandClassifier(home="/home/me", protected=("/home/me/.seam",), cpu_budget=30.0)

programs = st.sampled_from(
    [
        "ls",
        "cat",
        "echo",
        "rm",
        "git",
        "curl",
        "sudo",
        "sh",
        "bash",
        "python3",
        "find",
        "xargs",
        "env",
        "grep",
        "chmod",
        "dd",
        "eval",
        "printf",
        "tee",
        "cp",
        "mv",
        "base64",
        "wget",
        "true",
    ]
)
words = st.sampled_from(
    [
        "-rf",
        "-la",
        "/",
        "~",
        "~/.bashrc",
        "/etc/passwd",
        "*",
        ".",
        "..",
        "$HOME",
        "${X}",
        "-c",
        "status",
        "log",
        "-exec",
        "{}",
        "\\;",
        "x=1",
        "-d",
        "of=/dev/sda",
        "http://e.x/a",
        "/home/me/.seam/config.toml",
        "a b",
        "--",
        "-n",
        "'quoted'",
        '"dq"',
        "$(id)",
        "`id`",
    ]
) | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
joiners = st.sampled_from([" | ", " && ", " || ", "; ", " & ", " > out ", " 2>&1 ", " < in ", "\n"])
simple = st.builds(lambda p, a: " ".join([p, *a]), programs, st.lists(words, max_size=4))


def _chain(parts: list[str], joins: list[str]) -> str:
    out = parts[0]
    for part, join in zip(parts[1:], joins, strict=False):
        out += join + part
    return out


commands = st.one_of(
    st.builds(
        _chain,
        st.lists(simple, min_size=1, max_size=4),
        st.lists(joiners, min_size=3, max_size=3),
    ),
    st.text(max_size=60),
)


def _classify(command: str, guard: CommandClassifier = GUARD) -> str:
    started = time.process_time()
    result = guard.classify(command)
    # The classifier's own budget is 10 ms of CPU; allow for a loaded machine's noise.
    assert time.process_time() - started < 1.0
    assert result.verdict in SEVERITY
    return result.verdict


@given(commands)
@example("rm -rf /")
@example("echo '")
@example("cat ~/.seam/config.toml")
def test_wrapping_in_sh_c_is_never_judged_safer(command: str) -> None:
    # `sh -c -x` reads `-x` as the shell's own option, not as the script (the guard
    # reads it the way sh does): such a text is not the same command once wrapped.
    assume(not command.startswith(("-", "+")))
    verdict = UNHURRIED.classify(command).verdict
    wrapped = UNHURRIED.classify(f"sh -c {shlex.quote(command)}").verdict
    assert SEVERITY[wrapped] >= SEVERITY[verdict], (command, verdict, wrapped)


@given(commands | st.text(max_size=300))
def test_any_text_gets_a_verdict_in_bounded_time(command: str) -> None:
    _classify(command)
    _classify(f"sh -c {shlex.quote(command)}")
