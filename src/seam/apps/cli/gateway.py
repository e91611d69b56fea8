"""`seam gateway` (the agent in Telegram, Slack and Discord) and `seam pairing` (who
outside the allow lists may talk to it)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Annotated, Any

import typer

from seam.contracts.names import clean_name

if TYPE_CHECKING:
    from seam.apps.gateway.pairing import PairingStore
    from seam.contracts.outbox import Outbox
    from seam.wiring.runtime import Runtime

pairing_app = typer.Typer(
    help="Approve people who asked to talk to the agent.", no_args_is_help=True
)


gateway_app = typer.Typer(help="Run the chat platforms configured under [gateway] until stopped.")


@gateway_app.callback(invoke_without_command=True)
def gateway_command(ctx: typer.Context) -> None:
    """Run the chat platforms configured under [gateway] until stopped (`status` and
    `clear` look at what did not go through)."""
    if ctx.invoked_subcommand is not None:
        return
    from seam.apps.cli.runner import execute
    from seam.apps.gateway.serve import serve_gateway

    execute(serve_gateway(), surface="gateway")


def _subcommand(name: str, summary: str, main: Callable[[], Coroutine[Any, Any, int]]) -> None:
    """`seam gateway NAME`, running `main()` as every command runs (one-line errors)."""

    def command() -> None:
        from seam.apps.cli.runner import execute

        execute(main())

    gateway_app.command(name, help=summary)(command)


async def _status() -> int:
    from seam.apps.cli.render import terminal_safe
    from seam.apps.cli.runner import open_runtime
    from seam.apps.gateway.report import adapter_lines, update_lines
    from seam.apps.gateway.status import read_status, status_path

    async with open_runtime() as runtime:
        assert runtime.settings is not None
        adapters = read_status(status_path(runtime.settings)).get("adapters", {})
        lines = adapter_lines(adapters, time.time()) or ["no gateway has run here yet"]
        lines += await update_lines(_outbox(runtime))
    sys.stdout.write("".join(f"{terminal_safe(line)}\n" for line in lines))
    return 0


async def _clear() -> int:
    from seam.apps.cli.runner import open_runtime
    from seam.apps.gateway.inbox import Inbox

    async with open_runtime() as runtime:
        cleared = await Inbox(_outbox(runtime)).clear()
    sys.stdout.write(f"cleared {cleared} dead update(s)\n")
    return 0


def _outbox(runtime: Runtime) -> Outbox:
    from seam.apps.cli.exits import USAGE
    from seam.apps.cli.runner import CliError
    from seam.contracts.outbox import Outbox

    store = runtime.store
    if not isinstance(store, Outbox):
        raise CliError("this store keeps no outbox, so no gateway updates", USAGE)
    return store


_subcommand("status", "Each platform's state, and the updates that are dead or stuck.", _status)
_subcommand("clear", "Dismiss the dead updates (after reading seam gateway status).", _clear)


def register(app: typer.Typer) -> None:
    app.add_typer(gateway_app, name="gateway")
    app.add_typer(pairing_app, name="pairing")


def _store() -> PairingStore:
    """The pairing file of this home; a bad config is a one-line error, not a traceback."""
    from seam.apps.gateway.pairing import PairingStore
    from seam.wiring.settings import ConfigError, load_settings

    try:
        return PairingStore.for_settings(load_settings())
    except ConfigError as exc:
        sys.stderr.write(f"seam: {exc}\n")
        raise typer.Exit(1) from None


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


@pairing_app.command("list")
def pairing_list() -> None:
    """Codes waiting for approval, and the approved users."""
    store = _store()
    pending, approved = store.pending(), store.approved()
    if not pending and not approved:
        sys.stdout.write("nobody is waiting and nobody is paired\n")
        return
    for item in pending:
        left = max(0, int(item.expires_at - time.time()) // 60)
        sys.stdout.write(
            f"waiting\t{item.code}\t{item.platform}:{clean_name(item.user_id)}"
            f"\t{clean_name(item.user_name)}"
            f"\t{left} min left\n"
        )
    for user in approved:
        name, ref = clean_name(user.user_name), clean_name(user.ref)
        sys.stdout.write(f"paired\t{ref}\t{name}\tsince {_when(user.approved_at)}\n")


@pairing_app.command("approve")
def pairing_approve(
    code: Annotated[str, typer.Argument(help="The code the person was given.")],
) -> None:
    """Let the person who was given CODE talk to the agent."""
    import getpass

    from seam.apps.gateway.pairing import PairingError

    try:
        user = _store().approve(code, by=f"cli:{getpass.getuser()}")
    except PairingError as exc:
        sys.stderr.write(f"seam: {exc}\n")
        raise typer.Exit(1) from None
    sys.stdout.write(f"approved {clean_name(user.ref)} ({clean_name(user.user_name)})\n")


@pairing_app.command("revoke")
def pairing_revoke(
    user: Annotated[str, typer.Argument(help="platform:id (or just the id).")],
) -> None:
    """Stop USER from talking to the agent (they can ask to pair again)."""
    gone = _store().revoke(user)
    if not gone:
        sys.stderr.write(f"seam: {user!r} is not paired\n")
        raise typer.Exit(1)
    for item in gone:
        sys.stdout.write(f"revoked {item.ref}\n")
