"""The `seam` console script.

`seam --version` is answered before anything else is imported: a version check (and the
shell completions and scripts that run one) should cost barely more than starting
Python. Everything else loads the Typer app, whose commands import their own needs.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["--version"], ["-V"]):
        from seam import __version__

        sys.stdout.write(f"seam {__version__}\n")
        return 0
    from seam.apps.cli.app import app

    app(args=args, prog_name="seam")
    return 0
