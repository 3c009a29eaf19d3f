"""Where the lab server's python comes from: .venv-lab beside the sources, or the one
$PLANSMITH_LAB_PYTHON names (an installed plansmith has no source tree around it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SHOW = (
    "from plansmith.domains.lab.sim import LAB_PYTHON, REPO_ROOT, require_lab_venv\n"
    "from plansmith.errors import ServerStartError\n"
    "print(LAB_PYTHON)\n"
    "print(REPO_ROOT)\n"
    "try:\n"
    "    require_lab_venv()\n"
    "except ServerStartError as error:\n"
    "    print(error.message)\n"
    "    print(error.hint)\n"
)


def _show(**env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k != "PLANSMITH_LAB_PYTHON"}
    done = subprocess.run(
        [sys.executable, "-c", SHOW],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.splitlines()


def test_the_lab_python_is_the_venv_beside_the_sources_by_default() -> None:
    lines = _show()
    assert lines[0] == str(Path(lines[1]) / ".venv-lab" / "bin" / "python")


def test_plansmith_lab_python_names_another_one_and_a_missing_one_is_a_typed_error(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "lab" / "bin" / "python"
    lines = _show(PLANSMITH_LAB_PYTHON=str(missing))
    assert lines[0] == str(missing)
    assert lines[2] == f"the lab server's virtual environment is not usable: {missing} is missing"
    assert "$PLANSMITH_LAB_PYTHON" in lines[3]
