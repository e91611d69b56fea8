"""A personality's own `[budget]` in its config.toml: read into its limits, and a bad
table refused in one line naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from seam.contracts.budget import BudgetLimits
from seam.plugins.personalities.files import FilePersonalityRegistry


def registry(tmp_path: Path, config: str) -> FilePersonalityRegistry:
    folder = tmp_path / "frugal"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SOUL.md").write_text("You are frugal.", encoding="utf-8")
    (folder / "config.toml").write_text(config, encoding="utf-8")
    return FilePersonalityRegistry(str(tmp_path), default_id="frugal")


def test_a_personality_reads_its_own_limits(tmp_path: Path) -> None:
    found = registry(tmp_path, "[budget]\nsession_tokens = 5000\nday_usd = 0.5\n").get("frugal")
    assert found.budget == BudgetLimits.of({"session_tokens": 5000, "day_usd": 0.5})
    assert registry(tmp_path / "plain", 'name = "P"\n').get("frugal").budget is None


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ("[budget]\nsession_tokens = -1\n", "'session_tokens' must be a number of at least 0"),
        ("[budget]\nweekly_usd = 3\n", "unknown key 'weekly_usd'"),
        ('[budget]\nday_usd = "lots"\n', "'day_usd' must be a number"),
        ('budget = "none"\n', "'budget' must be a table"),
    ],
)
def test_a_bad_budget_table_is_one_line(tmp_path: Path, table: str, said: str) -> None:
    with pytest.raises(KeyError) as caught:
        registry(tmp_path, table).get("frugal")
    message = str(caught.value.args[0])
    assert said in message and "config.toml" in message and "\n" not in message
