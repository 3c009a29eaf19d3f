"""``plansmith mcp``'s options: a bad transport or config is a clear error, exit code 2."""

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
