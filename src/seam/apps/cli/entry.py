"""The `seam` console script.

`seam --version` is answered before anything else is imported: a version check (and the
shell completions and scripts that run one) should cost barely more than starting
Python. A well-formed `seam run` goes straight to the one-shot (`run_args`), without
Typer; everything else loads the Typer app, whose commands import their own needs.
"""

from __future__ import annotations

import sys
import types


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["--version"], ["-V"]):
        from seam import __version__

        sys.stdout.write(f"seam {__version__}\n")
        return 0
    skip_httpx_command_line()
    skip_pydantic_plugin_scan()
    if args[:1] == ["run"]:
        from seam.apps.cli.run_args import parse_run, run_command

        parsed = parse_run(args[1:])
        if parsed is not None:  # well-formed: no Typer needed (see `run_args`)
            # Called with no argv, main is the `seam` script's: the process ends with
            # the one-shot, without tearing the interpreter down (`runner.end_process`).
            run_command(parsed, exit_now=argv is None)
            return 0
    from seam.apps.cli.app import app

    try:
        app(args=args, prog_name="seam")
    except Exception as exc:
        return config_problem(exc)
    return 0


def config_problem(exc: Exception) -> int:
    """A bad config file or variable, however a command came to read it, is one line and
    exit 2 (usage), never a traceback; anything else goes on up. The settings module is
    looked up, not imported: if it raised, it is loaded, and `seam --help` stays light."""
    settings = sys.modules.get("seam.wiring.settings")
    if settings is None or not isinstance(exc, settings.ConfigError):
        raise exc
    from seam.apps.cli.exits import USAGE

    sys.stderr.write(f"seam: {exc}\n")
    return USAGE


def skip_httpx_command_line() -> None:
    """httpx's package imports its own command line (`httpx._main`, which pulls in
    click, rich and pygments: about 100 modules) whenever those are installed, and
    quietly does without it when that import fails. Seam never runs it: a `None` entry
    in `sys.modules` makes the import fail, before httpx is first imported."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


def skip_pydantic_plugin_scan() -> None:
    """pydantic looks for plugins the first time a model is built: it reads the entry
    points of every installed distribution through `importlib.metadata` (which imports
    email, zipfile, csv and importlib.resources: about 30 modules, and a walk of
    site-packages). Seam uses no pydantic plugin, so the command line stands in a loader
    that finds none, unless pydantic already loaded its own."""
    name = "pydantic.plugin._loader"
    if name not in sys.modules:
        loader = types.ModuleType(name, "Seam's command line: no pydantic plugins.")
        loader.get_plugins = tuple  # type: ignore[attr-defined]
        sys.modules[name] = loader
