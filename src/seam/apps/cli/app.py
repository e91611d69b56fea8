"""The `seam` commands. Each is a thin shell that imports its module only when it runs,
so `seam --help` and a typo cost a Typer import, not the whole runtime."""

from __future__ import annotations

from typing import Annotated

import typer

from seam import __version__
from seam.apps.cli.cron import register as register_cron
from seam.apps.cli.dnd import register as register_dnd
from seam.apps.cli.durable import register as register_durable
from seam.apps.cli.gateway import register as register_gateway
from seam.apps.cli.guard import register as register_guard
from seam.apps.cli.heartbeat import register as register_heartbeat
from seam.apps.cli.logs import register as register_logs
from seam.apps.cli.mcp import register as register_mcp
from seam.apps.cli.memory import register as register_memory
from seam.apps.cli.rewind import register as register_rewind
from seam.apps.cli.skills import register as register_skills
from seam.apps.cli.undo import register as register_undo
from seam.apps.cli.web import register as register_web

app = typer.Typer(
    name="seam",
    help="Seam: a personal AI agent in your terminal.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain help and errors: Rich formatting would add its import to every invocation.
    rich_markup_mode=None,
)
sessions_app = typer.Typer(help="Find and read past conversations.", no_args_is_help=True)
app.add_typer(sessions_app, name="sessions")
register_rewind(sessions_app)
register_guard(app)
register_memory(app)
register_mcp(app)
register_skills(app)
register_durable(app)
register_web(app)
register_dnd(app)
register_heartbeat(app)
register_gateway(app)
register_cron(app)
register_logs(app)
register_undo(app)

SessionOption = Annotated[
    str | None, typer.Option("--session", help="Session name (created if new).")
]
PersonalityOption = Annotated[
    str | None, typer.Option("--personality", help="Personality id (see /personality).")
]
ModelOption = Annotated[
    str | None, typer.Option("--model", help="Model name; overrides SEAM_MODEL.")
]
LimitOption = Annotated[int, typer.Option("--limit", min=1, help="At most this many.")]
YesOption = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Start even in the home directory itself (or /)."),
]
RunYesOption = Annotated[
    bool,
    typer.Option(
        "--yes",
        "-y",
        help="Answer yes for the person: approve each tool call that asks (once; forbidden"
        " and never-allowed ones stay refused), and start even in the home directory.",
    ),
]
TurnTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0,
        metavar="SECONDS",
        help="Stop a turn that takes longer (default: [agent] turn_timeout; 0: no limit).",
    ),
]


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"seam {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", help="Print the version.", is_eager=True, callback=_show_version
        ),
    ] = False,
) -> None:
    """Seam: a personal AI agent in your terminal."""


def _exit_codes() -> str:
    # Imported here: the table is a few constants, not the runtime.
    from seam.apps.cli.exits import exit_codes_help

    return exit_codes_help()


@app.command(epilog=_exit_codes())
def run(
    prompt: Annotated[str, typer.Argument(help="What to ask; - reads it from stdin.")],
    session: SessionOption = None,
    personality: PersonalityOption = None,
    model: ModelOption = None,
    json_: Annotated[
        bool, typer.Option("--json", help="Print every event as a JSON line instead.")
    ] = False,
    yes: RunYesOption = False,
    timeout: TurnTimeoutOption = None,
    image: Annotated[
        list[str] | None,
        typer.Option("--image", help="An image file to show the model (repeatable)."),
    ] = None,
) -> None:
    """Run one turn and print the answer (exit codes below)."""
    from seam.apps.cli.run_args import RunArgs, run_command

    images = tuple(image or ())
    run_command(RunArgs(prompt, session, personality, model, json_, yes, timeout, images))


@app.command()
def chat(
    session: SessionOption = None,
    personality: PersonalityOption = None,
    model: ModelOption = None,
    yes: YesOption = False,
    timeout: TurnTimeoutOption = None,
) -> None:
    """Chat interactively (type /help inside for commands)."""
    from seam.apps.cli.chat import run_chat
    from seam.apps.cli.runner import execute

    execute(run_chat(session, personality, model, timeout, yes=yes))


@app.command()
def doctor(
    deep: Annotated[
        bool, typer.Option("--deep", help="Also load the local model and generate a token.")
    ] = False,
) -> None:
    """Check what is configured and whether it works."""
    from seam.apps.cli.doctor import run_doctor
    from seam.apps.cli.runner import execute

    execute(run_doctor(deep))


@app.command()
def models(
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds to wait for each provider.")
    ] = 10.0,
) -> None:
    """List the configured providers and check that each one answers."""
    from seam.apps.cli.models import run_models
    from seam.apps.cli.runner import execute

    execute(run_models(timeout))


@app.command("acp")
def acp_(
    model: ModelOption = None,
    tenant: Annotated[
        str | None,
        typer.Option("--tenant", help="Run the editor's sessions as this tenant, not the owner."),
    ] = None,
) -> None:
    """Serve the Agent Client Protocol on stdio, for editors (Zed and others)."""
    from seam.apps.acp.access import tenant_problem
    from seam.apps.acp.serve import serve_acp
    from seam.apps.cli.runner import execute

    problem = tenant_problem(tenant) if tenant is not None else None
    if problem is not None:
        typer.echo(f"seam: {problem}", err=True)
        raise typer.Exit(2)
    execute(serve_acp(model, tenant), surface="acp")


@sessions_app.command("list")
def sessions_list(
    limit: LimitOption = 20,
    all_: Annotated[
        bool, typer.Option("--all", help="Include subagents' sessions (task: names).")
    ] = False,
) -> None:
    """Recent sessions, newest first."""
    from seam.apps.cli.runner import execute
    from seam.apps.cli.sessions import list_sessions

    execute(list_sessions(limit, subagents=all_))


@sessions_app.command("show")
def sessions_show(
    name: Annotated[str, typer.Argument(help="Session name.")],
    json_: Annotated[bool, typer.Option("--json", help="Print the transcript as JSON.")] = False,
) -> None:
    """A session's transcript."""
    from seam.apps.cli.runner import execute
    from seam.apps.cli.sessions import show_session

    execute(show_session(name, json_))


@sessions_app.command("search")
def sessions_search(
    query: Annotated[str, typer.Argument(help="Words to find, or a question about what was said.")],
    limit: LimitOption = 20,
) -> None:
    """Search every transcript by words and by meaning, best matches first."""
    from seam.apps.cli.runner import execute
    from seam.apps.cli.sessions_search import search_sessions

    execute(search_sessions(query, limit))


@sessions_app.command("export")
def sessions_export(
    name: Annotated[
        str | None, typer.Argument(help="Session name or title; every session when omitted.")
    ] = None,
) -> None:
    """Print a session as JSON (every session when NAME is omitted)."""
    from seam.apps.cli.runner import execute
    from seam.apps.cli.sessions import export_sessions

    execute(export_sessions(name))


@sessions_app.command("prune")
def sessions_prune(
    older_than: Annotated[
        str, typer.Option("--older-than", help="An age: 90d, 12h or 2w (days, hours, weeks).")
    ],
) -> None:
    """Delete ended sessions idle for longer than --older-than.

    A session ends when a chat leaves it (/new, /exit) or after `[sessions] idle_end`
    (default 24h) without activity."""
    from seam.apps.cli.runner import execute
    from seam.apps.cli.sessions import prune_sessions

    execute(prune_sessions(older_than))


@app.command("usage")
def usage(
    session: Annotated[
        str | None, typer.Option("--session", help="Also show this session's spend and limits.")
    ] = None,
    personality: Annotated[
        str | None, typer.Option("--personality", help="Count this personality's own limits.")
    ] = None,
    days: Annotated[int, typer.Option("--days", help="Days shown per day, today included.")] = 7,
    json_: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Tokens and cost today, per day and in a session, against the spending limits."""
    from seam.apps.cli.runner import execute
    from seam.apps.cli.usage import run_usage

    execute(run_usage(session, personality, days, json_))
