"""A one-shot `seam run` imports only what `tests/cli/imports_seam_run.txt` lists.

Each module on the one-shot path costs every `seam run` its import time and memory; a
new one fails here with its name, so it is seen in review: make it lazy, or regenerate
the list with `scripts/seam-run-imports` when it is meant.
"""

from __future__ import annotations

from tests.support.imports import listed, seam_run_modules


def test_seam_run_imports_nothing_new() -> None:
    expected = set(listed())
    added = [name for name in seam_run_modules() if name not in expected]
    assert not added, (
        f"seam run now imports {len(added)} more module(s): {', '.join(added)}\n"
        "make the import lazy, or run scripts/seam-run-imports if it is meant"
    )
