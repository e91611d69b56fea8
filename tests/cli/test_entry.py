"""`seam --version` answers before anything heavy is imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from seam import __version__
from tests.cli.conftest import Cli

pytestmark = pytest.mark.in_process

HEAVY = ("typer", "click", "rich", "pydantic", "httpx", "prompt_toolkit", "seam.wiring")


def test_version(cli: Cli) -> None:
    for flag in ("--version", "-V"):
        result = cli(flag)
        assert result.returncode == 0
        assert result.stdout == f"seam {__version__}\n"


def test_version_imports_nothing_heavy() -> None:
    probe = (
        "import sys\n"
        "from seam.apps.cli.entry import main\n"
        "main(['--version'])\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, encoding="utf-8", check=True
    )
    assert result.stdout.splitlines() == [f"seam {__version__}", "[]"]


def test_no_arguments_shows_help(cli: Cli) -> None:
    result = cli()
    assert "Usage: seam" in result.stdout + result.stderr
    for command in ("run", "chat", "doctor", "sessions"):
        assert command in result.stdout + result.stderr
