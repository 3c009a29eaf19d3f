"""``plansmith research`` refuses bad input with a typed error (exit 2, a hint) and makes
no run: an empty or huge question, a source folder that is missing or holds nothing
readable. Real processes; they stop before any corpus server starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from plansmith.domains.research import PLANTED_DIR

CLI = "import plansmith.cli._research; from plansmith.cli import app; app()"


def _research(tmp: Path, question: str, *sources: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", CLI, "research", question, "--home", str(tmp / "home")]
    for source in sources:
        command += ["--source", source]
    return subprocess.run(
        command, capture_output=True, text=True, cwd=tmp, timeout=120, check=False
    )


@pytest.mark.parametrize(
    ("question", "source", "message"),
    [
        ("", "notes", "the research question is empty"),
        ("x" * 10241, "notes", "over the limit of 10240"),
        ("When was tomllib added?", "gone", "no such folder"),
        ("When was tomllib added?", "empty", "holds nothing readable"),
    ],
)
def test_bad_input_exits_2_with_a_hint_and_makes_no_run(
    tmp_path: Path, question: str, source: str, message: str
) -> None:
    (tmp_path / "empty" / "_static").mkdir(parents=True)
    (tmp_path / "empty" / "_static" / "x.md").write_text("skipped\n", encoding="utf-8")
    folder = str(PLANTED_DIR / "notes") if source == "notes" else str(tmp_path / source)
    done = _research(tmp_path, question, folder)
    assert done.returncode == 2, done.stderr
    text = " ".join(done.stderr.split())
    assert message in text
    assert "hint:" in text
    runs = tmp_path / "home" / "runs"
    assert not runs.exists() or not any(runs.iterdir())
