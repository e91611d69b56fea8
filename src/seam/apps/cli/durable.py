"""`seam resume` and `seam worker`: finishing and serving durable submissions.

`seam resume` settles everything left pending (after a crash, or queued with nobody
running it) and prints each final answer. `seam worker` serves the queue until stopped;
with a PostgreSQL store, workers on several machines share it.

Nobody watches a worker or a resume, so a tool call that needs approval is refused at
once, the model being told no one was available to approve it, rather than left waiting
for an answer that cannot come. A worker stops on SIGTERM (or Ctrl-C): it claims nothing
more, gives the submission it runs `--grace` seconds to settle, then hands it back to the
queue for another worker; a second signal hands it back at once.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from seam.contracts.events import AgentEvent
    from seam.contracts.execution import Submission
    from seam.wiring.runtime import Runtime

# This module is imported by every `seam` invocation (it registers commands), so what
# the commands need is imported when they run.

JsonOption = Annotated[bool, typer.Option("--json", help="One JSON line per submission.")]
# Seconds a running submission gets to settle after SIGTERM before it is handed back.
STOP_GRACE = 10.0


def submission_dict(sub: Submission, name: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": sub.id,
        "state": sub.state,
        "outcome": sub.outcome,
        "attempts": sub.attempts,
        "input": sub.input,
        "result": sub.result,
        "error": sub.error,
        "finish_reason": sub.finish_reason,
        "created_at": sub.created_at,
        "settled_at": sub.settled_at,
    }
    if name is not None:
        out = {"session": name, **out}
    return out


class NobodyHere:
    """The events of turns nobody watches (a worker, a resume, a cron run): each approval
    request is answered `unavailable` at once, and the first one (with what its tool told
    the model) is kept, for a surface that can say so."""

    def __init__(self, runtime: Runtime) -> None:
        from seam.apps.cli.turn_control import Unanswered

        self.runtime = runtime
        self.unanswered = Unanswered()

    def __call__(self, event: AgentEvent) -> None:
        from seam.contracts.events import ToolApprovalRequired
        from seam.contracts.guardrail import UNAVAILABLE

        self.unanswered.note(event)
        if isinstance(event, ToolApprovalRequired):
            self.runtime.respond_to(event.session_key, event.call_id, UNAVAILABLE)

    def line(self) -> str | None:
        """What waited for an approval no one could give, and how to allow it (None:
        nothing did)."""
        from seam.apps.cli.exits import waited_line

        waited = self.unanswered.waited
        return None if waited is None else waited_line(waited, self.unanswered.told)


def _deny_approvals(runtime: Runtime) -> NobodyHere:
    return NobodyHere(runtime)


def _report(runtime: Runtime, sub: Submission, as_json: bool) -> None:
    import json

    from seam.apps.cli.render import json_safe, terminal_safe

    name = runtime.session_name_of(sub.session_key)
    if as_json:
        line = json.dumps(submission_dict(sub, name), ensure_ascii=False)
        sys.stdout.write(json_safe(line) + "\n")
    else:
        outcome = sub.outcome or sub.state
        body = sub.result if sub.outcome == "completed" else (sub.error or "")
        sys.stdout.write(terminal_safe(f"== {name} · {sub.id} · {outcome}\n{body}") + "\n")
    sys.stdout.flush()


async def resume(as_json: bool) -> int:
    from seam.apps.cli.exits import FAILURE
    from seam.apps.cli.runner import open_runtime, warn_unknown_tools

    async with open_runtime() as runtime:
        warn_unknown_tools(runtime)
        settled = await runtime.resume_pending(_deny_approvals(runtime))
        for sub in settled:
            _report(runtime, sub, as_json)
    if not settled and not as_json:
        sys.stderr.write("nothing to resume: every submission is settled\n")
    return FAILURE if any(s.outcome == "failed" for s in settled) else 0


async def work(once: bool, as_json: bool, grace: float = STOP_GRACE, concurrency: int = 1) -> int:
    import asyncio
    import signal

    from seam.apps.cli.runner import CliError, open_runtime, warn_unknown_tools
    from seam.wiring.cron import maybe_start_scheduler, stop_scheduler

    try:
        async with open_runtime() as runtime:
            warn_unknown_tools(runtime)
            deny = _deny_approvals(runtime)
            if once:
                for sub in await runtime.resume_pending(deny):
                    _report(runtime, sub, as_json)
                return 0
            stop = asyncio.Event()
            serving = asyncio.ensure_future(
                runtime.work(
                    stop=stop,
                    on_event=deny,
                    on_settled=lambda sub: _report(runtime, sub, as_json),
                    concurrency=concurrency,
                )
            )
            loop = asyncio.get_running_loop()

            def hand_back() -> None:
                # The coordinator releases what it held as the task is cancelled.
                if not serving.done():
                    serving.cancel()

            def on_signal() -> None:
                if stop.is_set():
                    hand_back()
                    return
                stop.set()
                sys.stderr.write(f"seam worker {runtime.owner}: stopping\n")
                sys.stderr.flush()
                loop.call_later(grace, hand_back)

            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, on_signal)
            sys.stderr.write(f"seam worker {runtime.owner}: waiting for submissions\n")
            sys.stderr.flush()
            # Cron jobs (and their deliveries) run in every worker, each slot once.
            cron = await maybe_start_scheduler(runtime)
            try:
                await asyncio.wait((serving,))
            finally:
                await stop_scheduler(cron)
                for signum in (signal.SIGINT, signal.SIGTERM):
                    loop.remove_signal_handler(signum)
            if not serving.cancelled():
                serving.result()
            sys.stderr.write(f"seam worker {runtime.owner}: stopped\n")
            sys.stderr.flush()
            return 0
    except ConnectionError as exc:
        raise CliError(str(exc)) from None


def register(app: typer.Typer) -> None:
    @app.command("resume")
    def resume_command(json_: JsonOption = False) -> None:
        """Finish every pending submission (after a crash) and print each answer."""
        from seam.apps.cli.runner import execute

        execute(resume(json_))

    @app.command("worker")
    def worker_command(
        once: Annotated[
            bool, typer.Option("--once", help="Settle what is pending now, then exit.")
        ] = False,
        json_: JsonOption = False,
        grace: Annotated[
            float,
            typer.Option(
                "--grace",
                min=0,
                help="Seconds a running submission gets to settle after SIGTERM before it"
                " is handed back to the queue.",
            ),
        ] = STOP_GRACE,
        concurrency: Annotated[
            int,
            typer.Option(
                "--concurrency",
                min=1,
                max=64,
                help="Submissions run at once, each of a different session (a session's"
                " turns still run one after another).",
            ),
        ] = 1,
    ) -> None:
        """Run submissions from the queue until stopped (Ctrl-C or SIGTERM)."""
        from seam.apps.cli.runner import execute

        execute(work(once, json_, grace, concurrency), surface="worker")
