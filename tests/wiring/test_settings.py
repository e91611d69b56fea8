from __future__ import annotations

from pathlib import Path

import pytest

from seam.wiring.settings import ConfigError, load_settings


def write_config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text, encoding="utf-8")


def test_no_config_and_no_env_means_the_local_model(tmp_path: Path) -> None:
    settings = load_settings({}, home=tmp_path)
    assert settings.provider == "local"
    assert settings.store_path == tmp_path / "sessions.db"


def test_openai_env_selects_the_openai_compatible_provider(tmp_path: Path) -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "SEAM_MODEL": "qwen"}
    settings = load_settings(env, home=tmp_path)
    assert settings.provider == "openai"
    assert settings.base_url == "http://127.0.0.1:9/v1"
    assert settings.model_override == "qwen"
    assert load_settings({"OPENAI_API_KEY": "k"}, home=tmp_path).provider == "openai"


def test_flag_beats_env_for_the_model(tmp_path: Path) -> None:
    settings = load_settings({"SEAM_MODEL": "a"}, home=tmp_path, model="b")
    assert settings.model_override == "b"


def test_config_file_can_name_the_provider_and_key_variable(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        '[model]\nprovider = "openai"\nbase_url = "http://127.0.0.1:1/v1"\n'
        'api_key_env = "MY_KEY"\n[agent]\nmax_iterations = 7\n',
    )
    settings = load_settings({"MY_KEY": "secret"}, home=tmp_path)
    assert settings.provider == "openai"
    assert settings.api_key == "secret"
    assert settings.config.agent.max_iterations == 7
    write_config(tmp_path, '[model]\nprovider = "local"\n')
    assert load_settings({"OPENAI_API_KEY": "k"}, home=tmp_path).provider == "local"


def test_seam_home_env_is_honoured(tmp_path: Path) -> None:
    settings = load_settings({"SEAM_HOME": str(tmp_path / "h")})
    assert settings.home == (tmp_path / "h").resolve()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[model\n", "not valid TOML"),
        ("[model]\nprovidr = 'x'\n", "model.providr: Extra inputs are not permitted"),
        ("[agent]\nmax_iterations = 0\n", "agent.max_iterations"),
        ("[model]\nprovider = 'gpt'\n", "model.provider"),
    ],
)
def test_bad_config_names_the_file_and_the_key(tmp_path: Path, text: str, expected: str) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_settings({}, home=tmp_path)
    assert str(tmp_path / "config.toml") in str(info.value)
    assert expected in str(info.value)


def test_bad_base_url_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL"):
        load_settings({"OPENAI_BASE_URL": "localhost:8000"}, home=tmp_path)
