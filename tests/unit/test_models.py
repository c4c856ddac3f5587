from pathlib import Path

import pytest

from cli.app import main
from state.config import load_config
from state.errors import ModelLoadError
from state.instance import Instance
from state.models import MODELS, join_parts, model_file


def _parts(tmp_path: Path, chunks: list[bytes]) -> list[Path]:
    paths = []
    for i, data in enumerate(chunks, 1):
        path = tmp_path / f"part{i}" / "data" / f"part{i:02d}.bin"
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        paths.append(path)
    return paths


def test_models_join_parts_in_order_atomically(tmp_path: Path) -> None:
    parts = _parts(tmp_path, [b"GGUF" + b"a" * 10, b"b" * 7, b"c" * 3])
    target = join_parts(parts, tmp_path / "cache" / "m.gguf")
    assert target.read_bytes() == b"GGUF" + b"a" * 10 + b"b" * 7 + b"c" * 3
    assert [p.name for p in target.parent.iterdir()] == ["m.gguf"]  # no partial left behind
    stamp = target.stat().st_mtime_ns
    assert join_parts(parts, target) == target and target.stat().st_mtime_ns == stamp  # reused


def test_models_refuse_parts_that_are_not_a_gguf_file(tmp_path: Path) -> None:
    parts = _parts(tmp_path, [b"not a model", b"x"])
    with pytest.raises(ModelLoadError, match="not a GGUF"):
        join_parts(parts, tmp_path / "cache" / "m.gguf")
    assert list((tmp_path / "cache").iterdir()) == []


def test_models_rejoin_a_truncated_earlier_join(tmp_path: Path) -> None:
    parts = _parts(tmp_path, [b"GGUF" + b"a" * 10, b"b" * 7])
    target = tmp_path / "cache" / "m.gguf"
    target.parent.mkdir()
    target.write_bytes(b"GGUF" + b"a" * 3)  # a crash of an older, non-atomic copy
    assert join_parts(parts, target).stat().st_size == 21


def test_models_split_model_resolves_through_its_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = MODELS["qwen2.5-coder-0.5b"]
    dirs = {pkg: tmp_path / pkg for pkg in model.packages}
    for i, directory in enumerate(dirs.values()):
        (directory / "data").mkdir(parents=True)
        (directory / "__init__.py").write_text("")
        (directory / "data" / f"part{i + 1:02d}.bin").write_bytes(b"GGUF" if i == 0 else b"z")

    class Spec:
        def __init__(self, path: Path) -> None:
            self.submodule_search_locations = [str(path)]

    monkeypatch.setattr(
        "state.models.importlib.util.find_spec",
        lambda name: Spec(dirs[name]) if name in dirs else None,
    )
    joined = model_file("qwen2.5-coder-0.5b", tmp_path / "cache")
    assert joined.read_bytes() == b"GGUF" + b"z" * 5


def test_models_missing_extra_names_the_install_command() -> None:
    with pytest.raises(ModelLoadError, match="uv sync --extra qwen15"):
        model_file("qwen2.5-coder-1.5b", Path("/nonexistent"))


def test_models_unknown_name_is_one_line() -> None:
    with pytest.raises(ModelLoadError, match="unknown embedded model 'gpt-5'"):
        model_file("gpt-5", Path("/nonexistent"))


def test_init_model_writes_the_choice_into_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "inst"
    assert main(["init", str(root), "--model", "qwen2.5-coder-0.5b"]) == 0
    assert load_config(Instance(root).config_file).llm.embedded_model == "qwen2.5-coder-0.5b"
    assert "uv sync --extra qwen05" in capsys.readouterr().err
    assert main(["init", str(tmp_path / "other"), "--model", "nope"]) != 0
    err = capsys.readouterr().err
    assert "unknown model 'nope'" in err and "Traceback" not in err and len(err.splitlines()) == 1
