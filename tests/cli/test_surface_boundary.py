"""The apps reach the core through `Runtime` methods only: no surface drives the loop, the
Coordinator or the SessionFactory itself (so none can start a turn off the one path)."""

from __future__ import annotations

import ast
from pathlib import Path

import seam.apps

APPS = Path(seam.apps.__file__).parent
# Runtime attributes that are the core itself, not a surface's way in.
CORE_ATTRIBUTES = frozenset({"loop", "coordinator", "factory"})


def _core_reaches(source: str) -> list[str]:
    """`<anything>.loop`, `.coordinator` or `.factory` attribute reads, and `getattr` with
    those names, in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in CORE_ATTRIBUTES:
            found.append(f"line {node.lineno}: .{node.attr}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr")
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in CORE_ATTRIBUTES
        ):
            found.append(f"line {node.lineno}: {node.func.id}(…, {node.args[1].value!r})")
    return found


def test_the_check_sees_each_way_in() -> None:
    source = (
        "runtime.loop.respond(k, c, 'deny')\n"
        "await rt.coordinator.work(rt.factory.resolve)\n"
        "getattr(runtime, 'loop')\n"
        "runtime.respond('s', c, 'deny')\n"
    )
    assert sorted(_core_reaches(source)) == [
        "line 1: .loop",
        "line 2: .coordinator",
        "line 2: .factory",
        "line 3: getattr(…, 'loop')",
    ]


def test_apps_never_touch_the_loop_the_coordinator_or_the_factory() -> None:
    files = sorted(APPS.rglob("*.py"))
    assert files, APPS
    reaches = {
        str(path.relative_to(APPS)): found
        for path in files
        if (found := _core_reaches(path.read_text(encoding="utf-8")))
    }
    assert reaches == {}
