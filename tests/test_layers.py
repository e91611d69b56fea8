"""The layer rules that import-linter cannot see: core/ and contracts/ reach for no globals."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import seam

SRC = Path(seam.__file__).parent
PURE = [SRC / "contracts", SRC / "core"]
FORBIDDEN_CALLS = {"open", "getenv", "home", "expanduser", "getcwd", "putenv"}
FORBIDDEN_ATTRS = {"environ"}
FORBIDDEN_IMPORTS = {"os", "pathlib", "httpx", "socket", "urllib", "http", "subprocess", "shutil"}


def _pure_files() -> list[Path]:
    return [p for root in PURE for p in sorted(root.rglob("*.py"))]


def test_contracts_and_core_read_no_env_home_or_files() -> None:
    problems: list[str] = []
    for path in _pure_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            where = f"{path.relative_to(SRC)}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                )
                for name in names:
                    if name.split(".")[0] in FORBIDDEN_IMPORTS:
                        problems.append(f"{where} imports {name}")
            elif isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if name in FORBIDDEN_CALLS:
                    problems.append(f"{where} calls {name}()")
            elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRS:
                problems.append(f"{where} touches .{node.attr}")
    assert problems == []


def test_import_linter_contracts_are_kept() -> None:
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint), "--no-cache"], capture_output=True, text=True, cwd=SRC.parent.parent
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout


def test_importing_seam_and_its_contracts_pulls_in_no_third_party_code() -> None:
    code = (
        "import sys, seam.contracts, seam.core;"
        "heavy = ('httpx', 'pydantic', 'typer', 'rich', 'llama_cpp');"
        "bad = [m for m in heavy if m in sys.modules];"
        "print(','.join(bad))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""
