"""`seam memory consolidate | history | revert`: tidy memory now or on a schedule, see
what each run changed, and undo a run with one command.

`consolidate` prints each file's change as a unified diff on stdout and what it did and
refused, with reasons, on stderr; `--dry-run` writes nothing. `--enable` adds the cron
job that runs it on a schedule (`seam cron list` shows it), `--disable` removes it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from seam.wiring.memory_consolidate import RunRecord

DEFAULT_EVERY = "1d"


def _say(lines: list[str]) -> None:
    from seam.apps.cli.render import terminal_safe

    for line in lines:
        sys.stderr.write(terminal_safe(line) + "\n")


def _show(record: RunRecord, *, changed_only: bool = True) -> None:
    """The record's operations and refusals (stderr), then its diff (stdout)."""
    from seam.apps.cli.render import terminal_safe
    from seam.wiring.memory_consolidate import detail_lines, diffs

    _say(detail_lines(record))
    sys.stdout.write(terminal_safe(diffs(record.changed if changed_only else record.files)))


async def consolidate(dry_run: bool) -> int:
    from seam.apps.cli.runner import CliError
    from seam.wiring.memory_consolidate import (
        MODEL_FAILED,
        ConsolidationBusy,
        build_consolidator,
        close_consolidator,
    )
    from seam.wiring.settings import load_settings

    consolidator = build_consolidator(load_settings())
    try:
        record = await consolidator.run("manual", dry_run=dry_run)
    except ConsolidationBusy as exc:
        raise CliError(str(exc)) from None
    finally:
        await close_consolidator(consolidator)
    _show(record)
    if dry_run:
        _say(["dry run: nothing was written"])
    elif record.changed:
        _say([f"run {record.id}; undo it with: seam memory revert {record.id}"])
    else:
        _say([f"run {record.id}: no change"])
    failed = [r.file for r in record.refused if r.reason.startswith(MODEL_FAILED)]
    if failed:
        raise CliError(f"the model gave no answer for {', '.join(failed)} (see above)")
    return 0


async def schedule(every: str | None, cron: str | None, tz: str) -> int:
    from seam.apps.cli.exits import USAGE
    from seam.apps.cli.runner import CliError, open_runtime
    from seam.wiring.cron import CronInputError, ScheduleSpec, cron_store_of, describe
    from seam.wiring.memory_consolidate import enable_job

    spec = ScheduleSpec(every=every or (None if cron else DEFAULT_EVERY), cron=cron, tz=tz)
    async with open_runtime() as runtime:
        try:
            job = await enable_job(cron_store_of(runtime.store), spec)
        except CronInputError as exc:
            raise CliError(str(exc), USAGE) from None
    when = describe(job.next_due_at, job.tz)
    _say([f"memory consolidation scheduled: {job.schedule} ({job.tz}), next {when}"])
    sys.stdout.write(job.id + "\n")
    return 0


async def unschedule() -> int:
    from seam.apps.cli.runner import open_runtime
    from seam.wiring.cron import cron_store_of
    from seam.wiring.memory_consolidate import disable_job

    async with open_runtime() as runtime:
        removed = await disable_job(cron_store_of(runtime.store))
    _say(
        [
            "memory consolidation unscheduled"
            if removed
            else "memory consolidation was not scheduled"
        ]
    )
    return 0


async def history(run_id: str | None) -> int:
    from seam.apps.cli.runner import CliError
    from seam.wiring.memory_consolidate import build_consolidator, find
    from seam.wiring.settings import load_settings

    consolidator = build_consolidator(load_settings())
    if run_id is None:
        records = consolidator.book.all()
        if not records:
            _say(["no consolidation has run yet (run one: seam memory consolidate)"])
        for record in reversed(records):
            sys.stdout.write(record.summary() + "\n")
        return 0
    try:
        record = find(consolidator, run_id)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    sys.stdout.write(record.summary() + "\n")
    _show(record)
    return 0


async def revert_run(run_id: str) -> int:
    from seam.apps.cli.runner import CliError
    from seam.wiring.memory_consolidate import ConsolidationBusy, build_consolidator, revert
    from seam.wiring.settings import load_settings

    try:
        record = revert(build_consolidator(load_settings()), run_id)
    except (ValueError, ConsolidationBusy) as exc:
        raise CliError(str(exc)) from None
    from seam.apps.cli.render import terminal_safe
    from seam.wiring.memory_consolidate import diffs

    sys.stdout.write(terminal_safe(diffs(record.revert)))
    _say([f"reverted run {record.id}"])
    return 0


def _check_flags(
    dry_run: bool, enable: bool, disable: bool, every: str | None, cron: str | None
) -> None:
    from seam.apps.cli.exits import USAGE
    from seam.apps.cli.runner import CliError

    if enable and disable:
        raise CliError("give --enable or --disable, not both", USAGE)
    if (every or cron) and not enable:
        raise CliError("--every and --cron schedule the job: give them with --enable", USAGE)
    if dry_run and (enable or disable):
        raise CliError("--dry-run runs a consolidation now: not with --enable or --disable", USAGE)


def register(memory_app: typer.Typer) -> None:
    """Add `consolidate`, `history` and `revert` to the `seam memory` group."""

    @memory_app.command("consolidate")
    def consolidate_command(
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="Show the diff; write nothing.")
        ] = False,
        enable: Annotated[
            bool, typer.Option("--enable", help="Run it on a schedule (a cron job).")
        ] = False,
        disable: Annotated[
            bool, typer.Option("--disable", help="Remove the scheduled job.")
        ] = False,
        every: Annotated[
            str | None, typer.Option("--every", help="With --enable: an interval (default 1d).")
        ] = None,
        cron: Annotated[
            str | None, typer.Option("--cron", help="With --enable: a 5-field cron expression.")
        ] = None,
        tz: Annotated[str, typer.Option("--tz", help="With --cron: the time zone.")] = "UTC",
    ) -> None:
        """Merge duplicate entries and drop contradicted ones, now or on a schedule."""
        from seam.apps.cli.runner import execute

        async def main() -> int:
            _check_flags(dry_run, enable, disable, every, cron)
            if enable:
                return await schedule(every, cron, tz)
            if disable:
                return await unschedule()
            return await consolidate(dry_run)

        execute(main())

    @memory_app.command("history")
    def history_command(
        run_id: Annotated[str | None, typer.Argument(help="A run's id: show its diff.")] = None,
    ) -> None:
        """List consolidation runs, or show one run's changes."""
        from seam.apps.cli.runner import execute

        execute(history(run_id))

    @memory_app.command("revert")
    def revert_command(run_id: Annotated[str, typer.Argument(help="The run's id.")]) -> None:
        """Undo a consolidation run."""
        from seam.apps.cli.runner import execute

        execute(revert_run(run_id))
