"""`seam resume` and `seam worker`: finishing and serving durable submissions.

`seam resume` settles everything left pending (after a crash, or queued with nobody
running it) and prints each final answer. `seam worker` serves the queue until stopped;
with a PostgreSQL store, workers on several machines share it.

Nobody watches a worker or a resume, so a tool call that needs approval is denied at
once rather than left waiting for an answer that cannot come.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from seam.contracts.events import AgentEvent
    from seam.contracts.execution import Submission
    from seam.wiring.runtime import Runtime

# This module is imported by every `seam` invocation (it registers commands), so what
# the commands need is imported when they run.

JsonOption = Annotated[bool, typer.Option("--json", help="One JSON line per submission.")]


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


def _deny_approvals(runtime: Runtime) -> Callable[[AgentEvent], None]:
    from seam.contracts.events import ToolApprovalRequired

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, ToolApprovalRequired):
            runtime.respond_to(event.session_key, event.call_id, "deny")

    return on_event


def _report(runtime: Runtime, sub: Submission, as_json: bool) -> None:
    import json

    name = runtime.session_name_of(sub.session_key)
    if as_json:
        sys.stdout.write(json.dumps(submission_dict(sub, name), ensure_ascii=False) + "\n")
    else:
        outcome = sub.outcome or sub.state
        body = sub.result if sub.outcome == "completed" else (sub.error or "")
        sys.stdout.write(f"== {name} · {sub.id} · {outcome}\n{body}\n")
    sys.stdout.flush()


async def resume(as_json: bool) -> int:
    from seam.apps.cli.runner import FAILURE, open_runtime

    async with open_runtime() as runtime:
        settled = await runtime.resume_pending(_deny_approvals(runtime))
        for sub in settled:
            _report(runtime, sub, as_json)
    if not settled and not as_json:
        sys.stderr.write("nothing to resume: every submission is settled\n")
    return FAILURE if any(s.outcome == "failed" for s in settled) else 0


async def work(once: bool, as_json: bool) -> int:
    import asyncio
    import signal

    from seam.apps.cli.runner import CliError, open_runtime

    try:
        async with open_runtime() as runtime:
            deny = _deny_approvals(runtime)
            if once:
                for sub in await runtime.resume_pending(deny):
                    _report(runtime, sub, as_json)
                return 0
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, stop.set)
            sys.stderr.write(f"seam worker {runtime.owner}: waiting for submissions\n")
            sys.stderr.flush()
            await runtime.work(
                stop=stop, on_event=deny, on_settled=lambda sub: _report(runtime, sub, as_json)
            )
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
    ) -> None:
        """Run submissions from the queue until stopped (Ctrl-C or SIGTERM)."""
        from seam.apps.cli.runner import execute

        execute(work(once, json_))
