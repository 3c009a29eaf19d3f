"""``plansmith mcp``'s options: a bad transport or config (a malformed file, a
max_parallel below 1) is a clear error located at the file, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner


def _invoke(*args: str) -> tuple[int, str]:
    import plansmith.cli._mcp  # noqa: F401 - registers the command
    from plansmith.cli._app import app

    result = CliRunner().invoke(app, ["mcp", *args])
    return result.exit_code, result.output


def test_an_unknown_transport_is_refused() -> None:
    code, output = _invoke("--transport", "websocket")
    assert code == 2
    assert "unknown transport 'websocket'" in output


@pytest.mark.parametrize(
    ("text", "expected"),
    [("max_runs: [1\n", "cannot read the config"), ("colour: red\n", "unknown: colour")],
)
def test_a_bad_config_file_names_the_file(tmp_path: Path, text: str, expected: str) -> None:
    config = tmp_path / "plansmith.yaml"
    config.write_text(text)
    code, output = _invoke("--config", str(config))
    assert code == 2
    assert expected in output
    assert "plansmith.yaml" in output


@pytest.mark.parametrize("value", ["0", "-1", "true", "2.5", "many"])
@pytest.mark.parametrize(
    ("key", "counted"), [("max_parallel", "steps in flight"), ("max_runs", "runs in flight")]
)
def test_a_config_count_below_one_is_refused_at_its_line(
    tmp_path: Path, key: str, counted: str, value: str
) -> None:
    other = "max_runs" if key == "max_parallel" else "max_parallel"
    config = tmp_path / "plansmith.yaml"
    config.write_text(f"{other}: 2\n{key}: {value}\n")
    code, output = _invoke("--config", str(config), "--home", str(tmp_path / "home"))
    assert code == 2
    assert f"plansmith.yaml:2: {key} must be an integer of 1 or more" in output
    assert f"{counted} at most: 1 or more" in output
    assert not (tmp_path / "home").exists()  # refused before the run log is opened
