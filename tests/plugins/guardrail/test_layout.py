"""The guard's code stays readable (issue #23): small files, and the two files allowed to
be long are tables only, so no decision hides in them."""

from __future__ import annotations

import ast
from pathlib import Path

import seam.plugins.guardrail

PACKAGE = Path(seam.plugins.guardrail.__file__).parent
# Pure rule data: literal tables of programs, options, patterns and rules, nothing else.
TABLES = ("rules.py", "allowlist_data.py")
LOGIC = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.If, ast.For, ast.While)


def test_every_file_but_the_tables_is_under_500_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in PACKAGE.rglob("*.py")
        if path.name not in TABLES and (n := len(path.read_text().splitlines())) >= 500
    }
    assert long == {}


def test_the_tables_hold_no_logic() -> None:
    for name in TABLES:
        tree = ast.parse((PACKAGE / name).read_text())
        found = [type(node).__name__ for node in ast.walk(tree) if isinstance(node, LOGIC)]
        assert found == [], name
        assert "pure rule data" in (ast.get_docstring(tree) or ""), name
