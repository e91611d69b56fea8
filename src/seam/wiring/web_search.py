"""`[web_search]`: the `web_search` tool when a provider is configured, nothing otherwise.

The key is read here, from the variable `api_key_env` names (never from the config file),
and handed to the provider only; a provider set without its key, or a SearXNG without its
URL, stops start-up with one line naming the key. One provider object (and so one HTTP
client and connection pool) serves the whole process, whatever runtimes it builds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from seam.contracts.personality import PersonalityRegistry
from seam.contracts.tools import Tool
from seam.wiring.default_tools import DefaultGets
from seam.wiring.settings import ConfigError, Settings, WebSearchSection

if TYPE_CHECKING:
    from seam.plugins.tools.search_providers import SearchProvider

WEB_SEARCH_TOOLS = ("web_search",)
_providers: dict[tuple[str, str, str, float], SearchProvider] = {}


def web_search_tools(settings: Settings | None) -> tuple[Tool, ...]:
    """The `web_search` tool the settings configure, or none: off unless `provider` is
    set (the tool is then not offered at all). Its results are judged by the address rule
    `web_fetch` follows, with the same `[network] allow_private`."""
    if settings is None or not settings.config.web_search.provider:
        return ()
    from seam.plugins.tools.web_search import WebSearch

    section = settings.config.web_search
    return (
        WebSearch(
            search_provider(settings),
            max_results=section.max_results,
            allowed_hosts=settings.config.network.allow_private,
        ),
    )


def search_provider(settings: Settings) -> SearchProvider:
    """The process's one provider for this configuration (made on first use)."""
    section = settings.config.web_search
    key = _key(settings, section)
    slot = (section.provider, section.url, key, section.timeout)
    provider = _providers.get(slot)
    if provider is None:
        provider = _providers[slot] = _make(section, key)
    return provider


def _key(settings: Settings, section: WebSearchSection) -> str:
    name = section.key_env
    if not name:
        return ""
    key = settings.env.get(name, "").strip()
    if not key:
        raise ConfigError(
            f"{settings.config_path}: [web_search] api_key_env: {name} is not set; the"
            f" {section.provider} provider needs its API key in that environment variable"
        )
    return key


def _make(section: WebSearchSection, key: str) -> SearchProvider:
    if section.provider == "searxng":
        from seam.plugins.tools.search_providers.searxng import SearxngSearch

        return SearxngSearch(section.url, timeout=section.timeout)
    if section.provider == "brave":
        from seam.plugins.tools.search_providers.brave import BraveSearch

        return BraveSearch(key, url=section.url, timeout=section.timeout)
    from seam.plugins.tools.search_providers.tavily import TavilySearch

    return TavilySearch(key, url=section.url, timeout=section.timeout)


def default_gets_web_search(personalities: PersonalityRegistry) -> DefaultGets:
    """The default personality offered `web_search` when it is configured (its toolset,
    written on first run, lists the built-in tools by name); others only by naming it."""
    return DefaultGets(personalities, WEB_SEARCH_TOOLS)
