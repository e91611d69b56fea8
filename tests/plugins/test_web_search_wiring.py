"""`[web_search]` to the tool: off by default, the key from the environment or a one-line
error naming it, one provider (one HTTP client) per configuration in the process, and the
default personality offered the tool only when it is configured."""

from __future__ import annotations

from pathlib import Path

import pytest

from seam.contracts.personality import Personality
from seam.core.personalities import StaticPersonalityRegistry
from seam.plugins.tools.search_providers.brave import BraveSearch
from seam.plugins.tools.web_search import WebSearch
from seam.wiring.secrets import configured_secrets
from seam.wiring.settings import ConfigError, ConfigFile, Settings
from seam.wiring.web_search import default_gets_web_search, search_provider, web_search_tools


def settings(tmp_path: Path, env: dict[str, str] | None = None, **section: object) -> Settings:
    config = ConfigFile.model_validate({"web_search": section} if section else {})
    return Settings(home=tmp_path, config=config, env=env or {})


def test_off_by_default(tmp_path: Path) -> None:
    assert web_search_tools(settings(tmp_path)) == ()
    assert web_search_tools(None) == ()
    assert ConfigFile().web_search.provider == ""


def test_a_keyed_provider_reads_its_key_from_the_named_variable(tmp_path: Path) -> None:
    configured = settings(
        tmp_path, {"MY_SEARCH": "k-123456789abcdef"}, provider="brave", api_key_env="MY_SEARCH"
    )
    [tool] = web_search_tools(configured)
    assert isinstance(tool, WebSearch) and tool.name == "web_search"
    provider = search_provider(configured)
    assert isinstance(provider, BraveSearch)
    # The same configuration gets the same provider: one client for the process.
    assert search_provider(configured) is provider
    # The key counts as a configured secret, whatever its variable is called.
    assert [s.name for s in configured_secrets(configured)] == ["MY_SEARCH"]


def test_a_missing_key_is_one_line_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        web_search_tools(settings(tmp_path, provider="tavily"))
    message = str(caught.value)
    assert "[web_search] api_key_env: TAVILY_API_KEY is not set" in message
    assert "\n" not in message


def test_the_default_personality_is_offered_the_tool() -> None:
    listed = Personality(id="default", soul="s", toolset=("read_file", "web_fetch"))
    other = Personality(id="other", soul="s", toolset=("read_file",))
    widened = default_gets_web_search(StaticPersonalityRegistry([listed, other]))
    assert widened.get("default").toolset == ("read_file", "web_fetch", "web_search")
    assert widened.get("other").toolset == ("read_file",)
