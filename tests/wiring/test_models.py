"""Provider refs, key pools, fallback chains and per-personality models, wired from settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from seam.contracts import Personality, RunStart
from seam.contracts.messages import Message
from seam.contracts.model import ModelRequest
from seam.core import StaticPersonalityRegistry
from seam.services.llm.anthropic import AnthropicProvider
from seam.services.llm.fallback import FallbackProvider
from seam.services.llm.openai_compat import OpenAICompatProvider
from seam.services.llm.pool import PooledProvider
from seam.wiring import create_runtime
from seam.wiring.models import ModelFactory, parse_ref
from seam.wiring.settings import ConfigError, load_settings
from tests.support.openai_server import OpenAIServer, closed_port, error_reply, text_reply
from tests.support.providers import text_of


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("openai:gpt-4o-mini", ("openai", "gpt-4o-mini")),
        ("anthropic:claude-haiku-4-5", ("anthropic", "claude-haiku-4-5")),
        ("local", ("local", "")),
        ("gpt-4o", ("openai", "gpt-4o")),
        ("qwen2.5:7b", ("openai", "qwen2.5:7b")),  # Ollama names have colons
        ("openrouter/anthropic/claude-3.5", ("openai", "openrouter/anthropic/claude-3.5")),
    ],
)
def test_provider_refs(ref: str, expected: tuple[str, str]) -> None:
    assert parse_ref(ref, "openai") == expected


def test_an_empty_ref_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="empty provider ref"):
        parse_ref(" ", "openai")


def test_anthropic_key_selects_anthropic(tmp_path: Path) -> None:
    settings = load_settings({"ANTHROPIC_API_KEY": "k"}, home=tmp_path)
    assert settings.provider == "anthropic"
    model = ModelFactory(settings).main()
    assert isinstance(model, AnthropicProvider) and model.model == "claude-sonnet-4-5"


def test_a_comma_list_of_keys_becomes_a_pool(tmp_path: Path, openai_server: OpenAIServer) -> None:
    env = {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEYS": "key-a, key-b"}
    factory = ModelFactory(load_settings(env, home=tmp_path))
    assert isinstance(factory.main(), PooledProvider)


async def test_pool_rotates_past_a_rejected_key_end_to_end(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    env = {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEYS": "key-a,key-b"}
    openai_server.push(error_reply(401), text_reply("from key b"))
    settings = load_settings(env, home=tmp_path / "home", working_dir=tmp_path)
    runtime = create_runtime(settings=settings)
    events = [e async for e in runtime.run("s", "hi")]
    assert events[-1].text == "from key b"
    auth = [r.headers["authorization"] for r in openai_server.chat_requests]
    assert auth == ["Bearer key-a", "Bearer key-b"]
    assert (tmp_path / "home" / "pools" / "openai.json").is_file()
    await runtime.aclose()


async def test_fallback_chain_from_config_completes_on_the_second_provider(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[model]\nprovider = "anthropic"\nfallback = ["openai:backup-model"]\n'
        f'[anthropic]\nbase_url = "http://127.0.0.1:{closed_port()}"\nmax_retries = 0\n',
        encoding="utf-8",
    )
    env = {"ANTHROPIC_API_KEY": "k", "OPENAI_BASE_URL": openai_server.base_url}
    openai_server.push(text_reply("backup answers"))
    runtime = create_runtime(settings=load_settings(env, home=home, working_dir=tmp_path))
    events = [e async for e in runtime.run("s", "hi")]
    start = events[0]
    assert isinstance(start, RunStart) and (start.provider, start.model) == (
        "openai",
        "backup-model",
    )
    assert events[-1].text == "backup answers"
    await runtime.aclose()


async def test_a_personality_can_name_its_own_provider_and_model(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    env = {"OPENAI_BASE_URL": openai_server.base_url, "ANTHROPIC_API_KEY": "k"}
    settings = load_settings(env, home=tmp_path / "home", working_dir=tmp_path)
    writer = Personality(id="writer", soul="You write.", model="openai:gpt-4.1-mini")
    poet = Personality(id="poet", soul="You rhyme.", model="anthropic:claude-haiku-4-5")
    runtime = create_runtime(
        settings=settings, personalities=StaticPersonalityRegistry([writer, poet])
    )
    chosen = runtime.loop.model_for(poet)
    assert isinstance(chosen, AnthropicProvider) and chosen.model == "claude-haiku-4-5"
    openai_server.push(text_reply("ok"))
    events = [e async for e in runtime.run("s", "hi", personality="writer")]
    assert events[-1].text == "ok"
    assert openai_server.chat_requests[0].body["model"] == "gpt-4.1-mini"  # type: ignore[index]
    await runtime.aclose()


def test_personality_fallback_builds_a_chain(tmp_path: Path, openai_server: OpenAIServer) -> None:
    env = {"OPENAI_BASE_URL": openai_server.base_url}
    factory = ModelFactory(load_settings(env, home=tmp_path))
    chain = factory.for_personality(Personality(id="p", soul="s", fallback=("openai:cheap-model",)))
    assert isinstance(chain, FallbackProvider)
    assert factory.for_personality(Personality(id="q", soul="s")) is None


def test_side_models_default_to_the_main_one_or_their_own_ref(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    (tmp_path / "config.toml").write_text(
        '[side_models]\ncompression = "openai:gpt-4.1-nano"\n', encoding="utf-8"
    )
    factory = ModelFactory(
        load_settings({"OPENAI_BASE_URL": openai_server.base_url}, home=tmp_path)
    )
    compression = factory.side("compression")
    assert isinstance(compression, OpenAICompatProvider) and compression.model == "gpt-4.1-nano"
    assert factory.side("titles").model == factory.main().model
    with pytest.raises(ValueError, match="unknown side task"):
        factory.side("poetry")


async def test_every_provider_of_one_endpoint_shares_one_connection(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    env = {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEYS": "key-a,key-b"}
    factory = ModelFactory(load_settings(env, home=tmp_path))
    openai_server.push(error_reply(401), text_reply("key b"), text_reply("other model"))
    request = ModelRequest(system="", messages=(Message("user", "hi"),))

    main = [c async for c in factory.main().stream(request)]
    other = [c async for c in factory.ref("openai:other-model").stream(request)]

    assert text_of(main) == "key b" and text_of(other) == "other model"
    assert len(openai_server.chat_requests) == 3  # two keys, two models
    assert openai_server.connections_accepted == 1
    await factory.aclose()
