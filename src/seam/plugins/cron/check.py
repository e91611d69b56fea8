"""A cron job's check: a command that says whether a slot has anything new to act on.

`seam cron add --check "COMMAND"` gives a job one. Before each scheduled slot is
claimed, the check runs in the sandbox, as the terminal tool's commands do (the same
guard, `CHECK_TIMEOUT` seconds at most), and its result decides:

- it exits 0 and prints nothing (stdout and stderr): nothing new. The slot is recorded in
  the job's runs as skipped with `NOTHING_NEW`, no model call is made and nothing is
  delivered;
- anything else runs the model as usual: it printed something (there is news), it
  failed or timed out, the guard refused it, no sandbox could run it. When in doubt, it
  runs; the run's note says why the check did not decide.

So write a check that prints what is new and exits 0 (`grep` exits 1 when it finds
nothing: `grep ... || true`). The check decides only whether the model is called: its
output is not put into the prompt (output is untrusted; the model's own tools read what
it needs). A job without a check runs every slot, as a prompt that depends only on time
should. A run started by hand (`seam cron run`) does not run the check.

The command is the job owner's, checked when the job is added (`check_command`: a
command the guard forbids is refused at once) and again before every run. The `cron`
tool takes no check: the model cannot add a command that runs unattended.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from seam.contracts.cron import CronJob
from seam.contracts.guardrail import Classification
from seam.contracts.sandbox import CommandResult, Sandbox

NOTHING_NEW = "nothing new: the check printed nothing"
CHECK_TIMEOUT = 60.0  # seconds
MAX_CHECK_CHARS = 2000
NOTE_CHARS = 80

# Runs a job's check and returns its result; raises (CheckRefused, SandboxError, ...) when
# it cannot be run.
CheckRun = Callable[[CronJob], Awaitable[CommandResult]]
Classify = Callable[[str], Classification]


class CheckRefused(Exception):
    """The guard forbids the check command (the message says why)."""


def check_command(command: str, classify: Classify | None) -> str:
    """A check as `seam cron add --check` takes it, or ValueError with one line: empty,
    too long, or forbidden by the guard."""
    text = command.strip()
    if not text:
        raise ValueError("--check is empty: give a command that prints what is new")
    if len(text) > MAX_CHECK_CHARS:
        raise ValueError(f"--check is over {MAX_CHECK_CHARS:,} characters")
    if classify is not None:
        found = classify(text)
        if found.verdict == "forbidden":
            raise ValueError(f"--check is refused by the guard: {found.reason}")
    return text


async def check_verdict(run: CheckRun | None, job: CronJob) -> tuple[str | None, str | None]:
    """(the reason to skip the slot, a note for a run that goes ahead); see the module doc."""
    if run is None:
        return None, "check not run (no sandbox here): ran anyway"
    try:
        result = await run(job)
    except CheckRefused as exc:
        return None, _cut(f"check refused ({exc}): ran anyway")
    except Exception as exc:
        return None, _cut(f"check could not run ({exc or type(exc).__name__}): ran anyway")
    if result.timed_out:
        return None, "check timed out: ran anyway"
    if result.exit_code != 0:
        return None, f"check failed (exit {result.exit_code}): ran anyway"
    if result.output.strip():
        return None, None
    return NOTHING_NEW, None


def _cut(note: str) -> str:
    line = " ".join(note.split())
    return line if len(line) <= NOTE_CHARS * 2 else line[: NOTE_CHARS * 2] + "…"


@dataclass
class SandboxCheck:
    """A `CheckRun` in the sandbox `sandbox_for(job)` gives, behind the guard's
    classification (`forbidden` is refused), time-limited, its output redacted."""

    sandbox_for: Callable[[CronJob], Sandbox]
    classify: Callable[[str, str], Classification]  # (command, working dir)
    timeout: float = CHECK_TIMEOUT
    redact: Callable[[str], str] | None = None

    async def __call__(self, job: CronJob) -> CommandResult:
        command = job.check or ""
        sandbox = self.sandbox_for(job)
        found = self.classify(command, sandbox.working_dir)
        if found.verdict == "forbidden":
            raise CheckRefused(found.reason)
        return await sandbox.run(command, timeout=self.timeout, redact=self.redact)
