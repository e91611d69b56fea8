"""Multi-byte text in a command: read back exactly, and never able to crash the process.

tree-sitter-bash's scanner could segfault on some multi-byte input (`{` followed by a
4-byte character, found by the fuzz suite): a hostile model could have taken the agent
down with one command. The grammar now sees an ASCII copy of the same shape; the words
are read from the real bytes."""

from __future__ import annotations

import subprocess
import sys

from seam.plugins.guardrail.shell import parse

CRASHED = "{\U00077a23k"


def test_multibyte_words_and_targets_are_read_from_the_real_text() -> None:
    script = parse("echo héllo > café.txt; printf '€%s' ü")
    first, second = (p.stages[0] for p in script.pipelines)
    assert first.words == ("echo", "héllo")
    assert first.redirects[0].target == "café.txt"
    assert second.words == ("printf", "€%s", "ü")
    assert not script.problem


def test_the_input_that_crashed_the_grammar_is_parsed_many_times_in_one_process() -> None:
    program = (
        "from seam.plugins.guardrail.shell import parse\n"
        f"for _ in range(3000): parse({CRASHED!r}, deadline=1e9); parse('x ' + {CRASHED!r})\n"
        "print('survived')\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == "survived"
