"""``plansmith research --rate --breaker-failures --breaker-cooldown``: the settings reach
the run (its trace and report show them; the source's own call log shows no call faster
than the rate), and bad values exit 2 with a hint naming the option, with no run made.
Real processes over the planted notes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from plansmith.domains.research import PLANTED_DIR

CLI = "import plansmith.cli._research; from plansmith.cli import app; app()"
NOTES = f"notes={PLANTED_DIR / 'notes'}"


def _research(tmp: Path, *options: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", CLI, "research", "What is Frobnicator?"]
    command += ["--source", NOTES, "--home", str(tmp / "home"), *options]
    return subprocess.run(
        command, capture_output=True, text=True, cwd=tmp, timeout=180, check=False
    )


def test_the_rate_and_breaker_reach_the_run(tmp_path: Path) -> None:
    done = _research(
        tmp_path,
        "--rate",
        "notes=2/s",
        "--breaker-failures",
        "3",
        "--breaker-cooldown",
        "12",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    words = "notes: 2 calls per 1 s; breaker after 3 failures in a row, cool-down 12 s"
    assert any(line.startswith(words) for line in payload["report"]["trace"]["usage"]["limits"])
    assert f"- Limits of {words};" in payload["report"]["markdown"]
    log = tmp_path / "home" / "research" / "notes.calls.jsonl"
    if not log.exists():
        (log,) = (tmp_path / "home").rglob("*.calls.jsonl")
    starts = sorted(float(json.loads(x)["started"]) for x in log.read_text().splitlines())
    assert len(starts) > 2
    for first, later in zip(starts, starts[2:], strict=False):
        assert later - first >= 0.99  # any three calls in a row span a second


def test_a_rate_for_every_source_and_the_defaults(tmp_path: Path) -> None:
    done = _research(tmp_path, "--rate", "120/min", "--json")
    assert done.returncode == 0, done.stderr
    (line,) = json.loads(done.stdout)["report"]["trace"]["usage"]["limits"]
    assert line == (
        "notes: 120 calls per 60 s; breaker after 5 failures in a row, cool-down 30 s; "
        "4 calls at once, 200 per run"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--rate", "5/parsec"), "argument --rate: not a rate: '5/parsec'"),
        (("--rate", "elsewhere=5/s"), "argument --rate: a rate for an unknown source"),
        (("--breaker-failures", "-1"), "argument --breaker-failures: breaker failures must"),
        (("--breaker-cooldown", "0"), "argument --breaker-cooldown: the breaker's cool-down"),
        (("--breaker-cooldown", "nan"), "argument --breaker-cooldown: the breaker's cool-down"),
    ],
)
def test_bad_limits_exit_2_with_a_hint_and_make_no_run(
    tmp_path: Path, options: tuple[str, ...], message: str
) -> None:
    done = _research(tmp_path, *options)
    assert done.returncode == 2, done.stderr
    text = " ".join(done.stderr.split())
    assert "QuotaConfigError" in text or "error:" in text
    assert message in text
    assert "hint:" in text
    runs = tmp_path / "home" / "runs"
    assert not runs.exists() or not any(runs.iterdir())
