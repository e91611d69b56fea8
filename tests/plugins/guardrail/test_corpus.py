"""The corpus test of the issue: dangerous commands are never safe, everyday ones rarely
need approval and are never forbidden."""

from __future__ import annotations

import pytest

from seam.plugins.guardrail.classifier import CommandClassifier
from tests.plugins.guardrail.corpus import load

DANGEROUS = load("corpus_dangerous.txt")
EVERYDAY = [command for _, command in load("corpus_everyday.txt")]
CHANGES = [command for _, command in load("corpus_changes.txt")]
# Issue #22's examples, as its text spells them (a `…` kept): each must be in the corpus.
ISSUE_22 = [
    "truncate -s0 main.py", "dd of=data.db", ": > f", "cp /dev/null src/app.py",
    "mv README.md /dev/null", "pip install --break-system-packages evilpkg",
    "find ~ -type f -exec truncate -s0 {} +", "ln -sf /dev/null ~/.bash_history",
    "git commit -m msg && git push", "find . -execdir python3 {} \\;", "tee ~/.hermes/.env",
    "sort --compress-prog=sh", "mapfile -C CMD", "let 'a[$(CMD)]'", "printf -v 'a[$(CMD)]'",
    "declare", "read -a", "[[ -v 'a[$(CMD)]' ]]", "${x@P}", "bash <(base64 -d <<< …)",
    "tar --checkpoint-act=exec=…", "sort --compress-prog=…", "git --upload-pack=…",
    "git rebase -x …", "cat ~/.ssh/id_rsa", "~/.aws/credentials", "/proc/$PPID/environ",
    "ps eww", "git checkout -f", "git restore .", "git stash drop", "truncate",
    "tar --remove-files", "sed -i '1,$d'",
]  # fmt: skip
OBFUSCATIONS = [
    "'r''m' -rf /",
    "$(echo rm) -rf /",
    "\\rm -rf /",
    "FOO=1 rm -rf /",
    "/usr/bin/env rm -rf /",
    'bash -c "rm -rf /"',
    'eval "rm -rf /"',
    "echo cm0gLXJmIC8= | base64 -d | sh",
    "esc:\x1b[31mrm\x1b[0m -rf /",
    "ls; rm -rf /; echo done",
    # The three disguises of issue #11, each once classed safe.
    "cp /bin/rm ./r && ./r -rf ~",
    'sh -c "$(echo rm -rf /)"',
    'perl -e "system q(rm -rf /)"',
]


@pytest.fixture(scope="module")
def guard() -> CommandClassifier:
    return CommandClassifier(home="/home/me", protected=["/home/me/.seam"])


def test_the_corpora_are_big_enough() -> None:
    assert len(DANGEROUS) >= 300
    assert len(EVERYDAY) >= 150
    assert len(CHANGES) >= 50
    assert {section for section, _ in DANGEROUS} == {"forbidden", "needs_approval"}
    commands = {command for _, command in DANGEROUS}
    for obfuscation in OBFUSCATIONS:
        assert obfuscation.removeprefix("esc:") in commands, obfuscation
    for example in ISSUE_22:
        assert example in commands, example


def test_no_dangerous_command_is_safe(guard: CommandClassifier) -> None:
    safe = [c for _, c in DANGEROUS if guard.classify(c).verdict == "safe"]
    assert safe == []


def test_each_dangerous_command_gets_its_verdict(guard: CommandClassifier) -> None:
    wrong = {
        command: (expected, found.verdict, found.rule)
        for expected, command in DANGEROUS
        if (found := guard.classify(command)).verdict != expected
    }
    assert wrong == {}


def test_everyday_commands_rarely_need_approval_and_are_never_forbidden(
    guard: CommandClassifier,
) -> None:
    verdicts = {command: guard.classify(command) for command in EVERYDAY}
    forbidden = [c for c, found in verdicts.items() if found.verdict == "forbidden"]
    asking = [c for c, found in verdicts.items() if found.verdict == "needs_approval"]
    assert forbidden == []
    assert len(asking) <= 0.03 * len(EVERYDAY), asking


def test_everyday_changes_ask_and_are_never_forbidden(guard: CommandClassifier) -> None:
    """Commits, installs, edits, moves: a developer does them daily, but they change what
    the person keeps, so since issue #22 they are not `safe`; they are not forbidden."""
    verdicts = {command: guard.classify(command) for command in CHANGES}
    wrong = {c: (f.verdict, f.rule) for c, f in verdicts.items() if f.verdict != "needs_approval"}
    assert wrong == {}


def test_everyday_read_only_commands_are_proven_read_only(guard: CommandClassifier) -> None:
    """The local backend runs only these unasked: the common reads must be among them."""
    read_only = {c for c in EVERYDAY if guard.classify(c).read_only}
    for command in ("ls -la", "cat README.md | head", "pwd"):
        assert command in read_only
    assert len(read_only) >= 0.25 * len(EVERYDAY)
