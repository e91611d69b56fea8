"""`seam cron add | edit | list | runs | pause | resume | rm | run`: jobs the agent runs on its
own time, and their run ledger.

Jobs live in the session store, so they run wherever a `seam worker`, `seam gateway` or
`seam serve` runs on that store (each due slot once, whichever). Bad input (a schedule,
zone, delivery target or policy Seam cannot use) is one line and exit code 2, at `add`,
not at the first run.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from seam.apps.cli.exits import USAGE

if TYPE_CHECKING:
    from seam.wiring.cron import JobOptions, ScheduleSpec

JsonOption = Annotated[bool, typer.Option("--json", help="JSON instead of text.")]
JobArgument = Annotated[str, typer.Argument(help="The job's id (see: seam cron list).")]


def _write(line: str) -> None:
    from seam.apps.cli.render import terminal_safe

    sys.stdout.write(terminal_safe(line) + "\n")


async def add_job(prompt: str, spec: ScheduleSpec, options: JobOptions) -> int:
    from seam.apps.cli.runner import CliError, open_runtime
    from seam.wiring.cron import CronInputError, admin_for, check_personality

    async with open_runtime() as runtime:
        try:
            check_personality(runtime, options.get("personality"))
            job = await admin_for(runtime).add(prompt, spec, **options)
        except CronInputError as exc:
            raise CliError(str(exc), USAGE) from None
    sys.stdout.write(job.id + "\n")
    return 0


async def list_jobs(as_json: bool) -> int:
    import json

    from seam.apps.cli.runner import open_runtime
    from seam.wiring.cron import admin_for, job_dict, job_line

    async with open_runtime() as runtime:
        jobs = await admin_for(runtime).list()
    if as_json:
        sys.stdout.write(json.dumps([job_dict(j) for j in jobs], ensure_ascii=False) + "\n")
    elif not jobs:
        sys.stderr.write('no cron jobs (add one: seam cron add --every 2h "...")\n')
    for job in [] if as_json else jobs:
        _write(job_line(job))
    return 0


async def list_runs(job_id: str, limit: int, as_json: bool) -> int:
    import json

    from seam.apps.cli.runner import CliError, open_runtime
    from seam.contracts.cron import CronJobNotFound
    from seam.wiring.cron import admin_for, delivery_errors_of, run_dict, run_line

    async with open_runtime() as runtime:
        admin = admin_for(runtime)
        try:
            job = await admin.job(job_id)
            runs = await admin.runs(job_id, limit=limit)
        except CronJobNotFound as exc:
            raise CliError(str(exc.args[0]), USAGE) from None
        errors = await delivery_errors_of(runtime, runs)
    if as_json:
        sys.stdout.write(json.dumps([run_dict(r) for r in runs], ensure_ascii=False) + "\n")
        return 0
    if not runs:
        sys.stderr.write(f"cron job {job_id} has not run yet\n")
    for run in runs:
        _write(run_line(run, job.tz, errors.get(run.slot_key)))
    return 0


async def change_job(job_id: str, action: str) -> int:
    from seam.apps.cli.runner import CliError, open_runtime
    from seam.contracts.cron import CronJobNotFound
    from seam.wiring.cron import admin_for

    async with open_runtime() as runtime:
        admin = admin_for(runtime)
        try:
            if action == "pause":
                await admin.pause(job_id)
            elif action == "resume":
                await admin.resume(job_id)
            elif not await admin.remove(job_id):
                raise CronJobNotFound(f"no cron job {job_id!r} (see: seam cron list)")
        except CronJobNotFound as exc:
            raise CliError(str(exc.args[0]), USAGE) from None
    done = {"pause": "paused", "resume": "resumed", "rm": "removed"}[action]
    sys.stderr.write(f"cron job {job_id} {done}\n")
    return 0


async def run_job(job_id: str) -> int:
    from seam.apps.cli.durable import _deny_approvals
    from seam.apps.cli.exits import FAILURE
    from seam.apps.cli.runner import CliError, open_runtime, say_error
    from seam.contracts.cron import CronJobNotFound
    from seam.wiring.cron import CronInputError, run_job_now

    async with open_runtime() as runtime:
        nobody = _deny_approvals(runtime)
        try:
            run = await run_job_now(runtime, job_id, on_event=nobody)
        except CronJobNotFound as exc:
            raise CliError(str(exc.args[0]), USAGE) from None
        except CronInputError as exc:
            raise CliError(str(exc), USAGE) from None
        sub = await runtime.store.submission(run.submission_id)
    body = (sub.result if sub and sub.outcome == "completed" else sub and sub.error) or ""
    _write(f"== {job_id} · {run.outcome or 'unsettled'} · delivery {run.delivery}\n{body}")
    waited = nobody.line()
    if waited is not None:  # the run went on without it: said, not an error
        say_error(waited)
    return 0 if run.outcome == "completed" and run.delivery != "failed" else FAILURE


PromptArgument = Annotated[str, typer.Argument(help="What to ask the agent at each run.")]
EveryOption = Annotated[
    str | None,
    typer.Option("--every", help="An interval: 30m, 2h, 1d (first run: now)."),
]
CronOption = Annotated[
    str | None,
    typer.Option("--cron", help='A 5-field cron expression, e.g. "0 9 * * 1-5".'),
]
AtOption = Annotated[
    str | None,
    typer.Option("--at", help="Once, at an ISO time: 2026-12-24T18:00 (in --tz)."),
]
TzOption = Annotated[str, typer.Option("--tz", help="Time zone of --cron and a naive --at.")]
DeliverOption = Annotated[
    str,
    typer.Option(
        "--deliver",
        help="owner, telegram:<chat>, file:<path under deliveries/>, a webhook URL, or none.",
    ),
]
PersonalityOption = Annotated[str | None, typer.Option("--personality", help="Personality id.")]
MissedOption = Annotated[
    str,
    typer.Option(
        "--missed",
        help="After downtime: skip (record missed slots, run nothing late) or"
        " catch_up_once (run the latest missed slot once).",
    ),
]
ContinueOption = Annotated[
    bool,
    typer.Option("--continue", help="Run in the job's own session, not a fresh one."),
]
UrgentOption = Annotated[bool, typer.Option("--urgent", help="Deliver even in quiet hours.")]
CheckOption = Annotated[
    str | None,
    typer.Option(
        "--check",
        help="A command run (in the sandbox) before each slot: when it exits 0 and prints"
        " nothing, there is nothing new and the model is not called.",
    ),
]
LimitOption = Annotated[int, typer.Option("--limit", min=1, help="At most this many.")]
_EACH_RUN = "each run may spend (0: no limit of its own; docs/budgets.md)"
MaxTokensOption = Annotated[int | None, typer.Option("--max-tokens", help=f"Tokens {_EACH_RUN}.")]
MaxUsdOption = Annotated[float | None, typer.Option("--max-usd", help=f"USD {_EACH_RUN}.")]


def limit_options(max_tokens: int | None, max_usd: float | None) -> JobOptions:
    """The spending flags given (left out: as they are)."""
    from seam.wiring.cron import JobOptions

    options = JobOptions()
    if max_tokens is not None:
        options["max_tokens"] = max_tokens
    if max_usd is not None:
        options["max_usd"] = max_usd
    return options


async def edit_job(job_id: str, options: JobOptions) -> int:
    from seam.apps.cli.runner import CliError, open_runtime
    from seam.contracts.cron import CronJobNotFound
    from seam.wiring.cron import CronInputError, admin_for, job_line

    if not options:
        raise CliError("nothing to change: give --max-tokens or --max-usd", USAGE)
    async with open_runtime() as runtime:
        try:
            job = await admin_for(runtime).edit(job_id, None, None, options)
        except (CronJobNotFound, CronInputError) as exc:
            raise CliError(str(exc.args[0] if exc.args else exc), USAGE) from None
    _write(job_line(job))
    return 0


def add_command(
    prompt: PromptArgument,
    every: EveryOption = None,
    cron: CronOption = None,
    at: AtOption = None,
    tz: TzOption = "UTC",
    deliver: DeliverOption = "owner",
    personality: PersonalityOption = None,
    missed: MissedOption = "skip",
    continue_: ContinueOption = False,
    urgent: UrgentOption = False,
    check: CheckOption = None,
    max_tokens: MaxTokensOption = None,
    max_usd: MaxUsdOption = None,
) -> None:
    """Add a job; prints its id."""
    from seam.apps.cli.runner import execute
    from seam.wiring.cron import JobOptions, ScheduleSpec

    execute(
        add_job(
            prompt,
            ScheduleSpec(every=every, cron=cron, at=at, tz=tz),
            JobOptions(
                deliver=deliver,
                personality=personality,
                missed=missed,
                continue_session=continue_,
                urgent=urgent,
                check=check,
                **limit_options(max_tokens, max_usd),
            ),
        )
    )


def edit_command(
    job: JobArgument, max_tokens: MaxTokensOption = None, max_usd: MaxUsdOption = None
) -> None:
    """Change a job's spending limits per run (the rest stays as it is)."""
    from seam.apps.cli.runner import execute

    execute(edit_job(job, limit_options(max_tokens, max_usd)))


def list_command(json_: JsonOption = False) -> None:
    """Every job: schedule, next run, delivery target, failures."""
    from seam.apps.cli.runner import execute

    execute(list_jobs(json_))


def runs_command(job: JobArgument, limit: LimitOption = 20, json_: JsonOption = False) -> None:
    """A job's run ledger, newest first: due, outcome, delivery, notes."""
    from seam.apps.cli.runner import execute

    execute(list_runs(job, limit, json_))


def pause_command(job: JobArgument) -> None:
    """Pause a job (nothing runs until it is resumed)."""
    from seam.apps.cli.runner import execute

    execute(change_job(job, "pause"))


def resume_command(job: JobArgument) -> None:
    """Resume a paused job (its failure count starts again at 0)."""
    from seam.apps.cli.runner import execute

    execute(change_job(job, "resume"))


def rm_command(job: JobArgument) -> None:
    """Remove a job and its run ledger."""
    from seam.apps.cli.runner import execute

    execute(change_job(job, "rm"))


def run_command(job: JobArgument) -> None:
    """Run a job now, once, here (its reply is delivered as a scheduled run's)."""
    from seam.apps.cli.runner import execute

    execute(run_job(job))


def register(app: typer.Typer) -> None:
    """Add the `cron` command group to the `seam` app.

    The commands are module-level functions (the options are the aliases above), so
    this only lists them in the order `seam cron --help` shows them.
    """
    cron_app = typer.Typer(
        help="Jobs the agent runs on its own time (in seam worker, gateway or serve).",
        no_args_is_help=True,
    )
    cron_app.command("add")(add_command)
    cron_app.command("edit")(edit_command)
    cron_app.command("list")(list_command)
    cron_app.command("runs")(runs_command)
    cron_app.command("pause")(pause_command)
    cron_app.command("resume")(resume_command)
    cron_app.command("rm")(rm_command)
    cron_app.command("run")(run_command)
    app.add_typer(cron_app, name="cron")
