"""Fixed per-request overhead: the system prompt (default personality's SOUL.md plus tool
guidance, as `ContextBuilder` assembles it, empty memory, no AGENTS.md) plus the tool
schemas an OpenAI-compatible request carries, for the default personality's toolset and
for every registered tool, with one MCP server of five tools (bench/mcp_docs_server.py,
started over stdio and listed through the MCP client, as a turn would), and with five
Agent Skills in $SEAM_HOME/skills (their index in the system prompt, plus the
`skill_view` and `skill_write` schemas; skill bodies are not sent until loaded).

Tokens are the loop's own estimate (`seam.core.tokens`: ~4 ASCII characters a token,
which is what the providers' `count_tokens` assumes too). The budget is 2,500 tokens
with the broadest toolset. Run:

    .venv/bin/python bench/prompt_overhead.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import tomllib
from collections.abc import Sequence
from pathlib import Path

from seam.contracts import ToolContext
from seam.contracts.context import PromptInputs
from seam.contracts.model import ToolDefinition
from seam.core.storage import InMemoryStorage
from seam.core.tokens import CharTokenEstimator, tool_schema_json
from seam.plugins.mcp.servers import McpServers
from seam.plugins.mcp.spec import ServerSpec
from seam.plugins.memory.markdown import MEMORY_LIMIT, USER_LIMIT
from seam.plugins.personalities.files import DEFAULT_CONFIG, DEFAULT_SOUL
from seam.plugins.skills.catalog import SkillCatalog
from seam.plugins.skills.skill import render_skill_file
from seam.wiring.context import build_context_builder
from seam.wiring.settings import Settings, load_settings
from seam.wiring.skills import build_skills
from seam.wiring.tools import build_tool_registry

BUDGET = 2_500
estimator = CharTokenEstimator()


# Five skills with descriptions of the length real ones have (agentskills.io examples).
FIVE_SKILLS = {
    "release-notes": "Write release notes from the git log since the last tag: group changes"
    " by kind, link pull requests, and flag breaking changes. Use when preparing a release.",
    "pdf-forms": "Fill in and flatten PDF forms with the bundled script; use when the person"
    " hands over a PDF form and the values to put in it.",
    "code-review": "Review a diff for bugs, missing tests and unclear names, and write the"
    " findings as a short list ordered by severity. Use before merging a branch.",
    "incident-report": "Draft an incident report (timeline, impact, root cause, follow-ups)"
    " from logs and chat notes. Use after an outage or a failed deploy.",
    "spreadsheet-cleanup": "Normalise a CSV or XLSX file: trim cells, fix dates and numbers,"
    " drop duplicate rows, and report what changed. Use for messy exported data.",
}


def five_skills(root: Path) -> tuple[Settings, SkillCatalog]:
    for name, description in FIVE_SKILLS.items():
        folder = root / "home" / "skills" / name
        folder.mkdir(parents=True)
        body = "Step by step instructions, only sent when the model loads the skill.\n" * 40
        (folder / "SKILL.md").write_text(render_skill_file(name, description, body))
    (root / "project").mkdir()
    settings = load_settings({}, home=root / "home", working_dir=root / "project")
    return settings, build_skills(settings)


async def system_prompt(tool_names: Sequence[str], settings: Settings | None = None) -> str:
    inputs = PromptInputs(DEFAULT_SOUL, tool_names, None, InMemoryStorage())
    built = await build_context_builder(settings).build("bench", inputs)
    return built.system


def row(label: str, chars: int, tokens: int) -> None:
    print(f"  {label:<32}{chars:>8,}{tokens:>10,}")


async def report(
    label: str, definitions: Sequence[ToolDefinition], settings: Settings | None = None
) -> int:
    system = await system_prompt([d.name for d in definitions], settings)
    schema_chars = sum(len(tool_schema_json(d)) for d in definitions)
    system_tokens = estimator.text(system)
    tool_tokens = estimator.tools(definitions)
    total = system_tokens + tool_tokens
    print(f"{label} ({len(definitions)} tools)")
    row("system prompt", len(system), system_tokens)
    row("tool schemas", schema_chars, tool_tokens)
    row("total", len(system) + schema_chars, total)
    verdict = "under" if total < BUDGET else "OVER"
    print(f"  -> {total:,} tokens, {verdict} the {BUDGET:,}-token budget\n")
    return total


async def mcp_definitions() -> list[ToolDefinition]:
    """The definitions a turn offers for one five-tool MCP server."""
    server = str(Path(__file__).with_name("mcp_docs_server.py"))
    servers = McpServers([ServerSpec(name="docs", command=(sys.executable, server))])
    try:
        await servers.prepare(None)
        registry = build_tool_registry(sources=[servers])
        ctx = ToolContext(session_key="bench", storage=InMemoryStorage())
        built = registry.build(["mcp__docs__*"], ctx)
        return registry.definitions(built)
    finally:
        await servers.aclose()


async def main() -> None:
    registry = build_tool_registry(workflows=True)
    tools = registry.build(None, ToolContext(session_key="bench", storage=InMemoryStorage()))
    everything = registry.definitions(tools)
    toolset = set(tomllib.loads(DEFAULT_CONFIG)["toolset"])
    default = [d for d in everything if d.name in toolset]

    print(f"{'':<34}{'chars':>8}{'~tokens':>10}")
    base = await report("default personality, default toolset", default)
    await report("default personality, every registered tool", everything)
    mcp = await mcp_definitions()
    mcp_tokens = estimator.tools(mcp)
    mcp_chars = sum(len(tool_schema_json(d)) for d in mcp)
    await report("default toolset + one MCP server of five tools", default + mcp)
    with tempfile.TemporaryDirectory() as root:
        settings, catalog = five_skills(Path(root))
        with_skills = build_tool_registry(skills=catalog)
        built = with_skills.build(
            ["skill_view", "skill_write"], ToolContext("bench", InMemoryStorage())
        )
        skill_tools = with_skills.definitions(built)
        skilled = await report("default toolset + five skills", default + skill_tools, settings)
        print(f"five skills add {skilled - base:,} tokens (index + skill_view + skill_write)\n")
        await report(
            "default toolset + five skills + one MCP server of five tools",
            default + skill_tools + mcp,
            settings,
        )
    print(f"MCP tools alone ({len(mcp)} from one server)")
    row("tool schemas", mcp_chars, mcp_tokens)
    for definition in mcp:
        row(definition.name, len(tool_schema_json(definition)), estimator.tools([definition]))
    print()
    memory = (MEMORY_LIMIT + USER_LIMIT) // 4
    print(f"(memory files at their limits would add ~{memory:,} tokens: the person's content)\n")
    print("tool schemas, largest first")
    for definition in sorted(everything, key=lambda d: -len(tool_schema_json(d))):
        size = len(tool_schema_json(definition))
        row(definition.name, size, estimator.tools([definition]))


if __name__ == "__main__":
    asyncio.run(main())
