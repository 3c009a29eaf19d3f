"""A stdio server's bare command that is not on its PATH is looked for beside plansmith's
own python, so the console scripts of a venv that is not activated start (plansmith-code,
plansmith-bio, plansmith-lab in the shipped servers.json files)."""

from __future__ import annotations

import sys
from pathlib import Path

from plansmith.servers._pool import _program

BIN = Path(sys.executable).parent


def test_a_bare_name_off_path_is_found_beside_this_python() -> None:
    assert _program("plansmith-code", {"PATH": "/nonexistent"}) == str(BIN / "plansmith-code")


def test_a_name_on_path_a_path_and_an_unknown_name_are_left_as_written(tmp_path: Path) -> None:
    assert _program("sh", {"PATH": "/usr/bin:/bin"}) == "sh"
    assert _program("./server", {"PATH": "/nonexistent"}) == "./server"
    assert _program("no-such-program-x", {"PATH": str(tmp_path)}) == "no-such-program-x"
