"""Fixed per-request overhead: the default personality's system prompt plus the schemas of
every built-in tool, as an OpenAI-compatible request carries them.

Tokens are estimated at four characters each (the providers' own `count_tokens`); run:

    .venv/bin/python bench/prompt_overhead.py
"""

from __future__ import annotations

import json

from seam.contracts import ToolContext
from seam.core.storage import InMemoryStorage
from seam.plugins.personalities.files import DEFAULT_SOUL
from seam.wiring.tools import build_tool_registry


def main() -> None:
    registry = build_tool_registry()
    tools = registry.build(None, ToolContext(session_key="bench", storage=InMemoryStorage()))
    wire = [
        {
            "type": "function",
            "function": {"name": d.name, "description": d.description, "parameters": d.parameters},
        }
        for d in registry.definitions(tools)
    ]
    schemas = json.dumps(wire, separators=(",", ":"))
    soul = DEFAULT_SOUL.strip()
    print(f"{'part':<34}{'chars':>8}{'~tokens':>10}")
    rows = [
        (f"tool schemas ({len(wire)} tools)", len(schemas)),
        ("system prompt (SOUL.md)", len(soul)),
    ]
    for name, chars in rows:
        print(f"{name:<34}{chars:>8}{(chars + 3) // 4:>10}")
    total = sum(chars for _, chars in rows)
    print(f"{'total':<34}{total:>8}{(total + 3) // 4:>10}")
    for d in sorted(wire, key=lambda w: -len(json.dumps(w))):
        size = len(json.dumps(d, separators=(",", ":")))
        print(f"  {d['function']['name']:<32}{size:>8}{(size + 3) // 4:>10}")


if __name__ == "__main__":
    main()
