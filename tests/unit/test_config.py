from pathlib import Path

import pytest

from graph.llm import band_temperature, make_chat_model
from state.config import DEFAULT_CONFIG_TOML, Config, load_config
from state.errors import DataFileError, ModelLoadError


def test_default_config_file_matches_defaults(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(DEFAULT_CONFIG_TOML)
    assert load_config(path, env={}) == Config()


def test_environment_overrides_file(tmp_path: Path) -> None:
    config = load_config(
        tmp_path / "missing.toml",
        env={"LUMEN_LLM_PROVIDER": "openai", "LUMEN_LLM_MODEL": "m1", "LUMEN_LLM_THREADS": "3"},
    )
    assert (config.llm.provider, config.llm.model, config.llm.threads) == ("openai", "m1", 3)


def test_invalid_config_names_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[llm]\nprovider = "magic"\n')
    with pytest.raises(DataFileError, match=r"config.toml: field 'llm.provider'"):
        load_config(path, env={})


def test_inverted_temperature_band_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[temperature_bands]\ntalk = { min = 0.9, max = 0.1 }\n")
    with pytest.raises(DataFileError, match=r"temperature_bands\.talk"):
        load_config(path, env={})


@pytest.mark.parametrize(
    ("mode", "requested", "expected"),
    [("talk", 0.1, 0.4), ("talk", 0.7, 0.7), ("work", 0.9, 0.6), ("autonomous", 0.7, 0.3)],
)
def test_temperature_is_clamped_to_the_mode_band(
    mode: str, requested: float, expected: float
) -> None:
    assert band_temperature(Config(), mode, requested)[0] == expected


def test_openai_provider_uses_base_url_and_clamped_temperature(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = load_config(
        Path("/nonexistent"),
        env={"LUMEN_LLM_PROVIDER": "openai", "LUMEN_LLM_BASE_URL": "http://127.0.0.1:9/v1"},
    )
    model = make_chat_model(config, mode="autonomous", temperature=1.5)
    assert model.temperature == 0.3  # type: ignore[attr-defined]
    assert str(model.openai_api_base) == "http://127.0.0.1:9/v1"  # type: ignore[attr-defined]


def test_openai_provider_without_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = load_config(Path("/nonexistent"), env={"LUMEN_LLM_PROVIDER": "openai"})
    with pytest.raises(ModelLoadError, match="OPENAI_API_KEY"):
        make_chat_model(config)
