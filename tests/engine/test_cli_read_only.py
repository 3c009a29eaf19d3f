"""``runs``, ``show`` and ``replay`` read a home this process may not write (an archived
or shared run log): they open the run log read-only and write nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import _engine_helpers as eh
import pytest

import plansmith.cli._run  # noqa: F401  (registers the commands on the app)

invoke, files = eh.invoke, eh.files
PLANSMITH = Path(sys.executable).parent / "plansmith"
ROOT = os.geteuid() == 0
#: root ignores file permissions: drop the capabilities that let it
AS_NON_ROOT = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner"]


@pytest.mark.skipif(ROOT and shutil.which("setpriv") is None, reason="root ignores permissions")
def test_runs_show_and_replay_read_a_home_they_may_not_write(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    home = tmp_path / "home"
    code, out, err = invoke("run", *files(inputs), "--yes", "--json", "--home", str(home))
    assert code == 0, err
    run_id = json.loads(out.splitlines()[0])["run_id"]
    paths = [home, *home.rglob("*")]
    before = sorted((str(p), p.stat().st_mtime_ns) for p in paths)
    for p in paths:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        for command in (["runs"], ["show", run_id], ["replay", run_id]):
            done = subprocess.run(
                [*(AS_NON_ROOT if ROOT else []), str(PLANSMITH), *command, "--home", str(home)],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, (command, done.stderr)
            assert "readonly database" not in done.stderr
        assert run_id in done.stderr or run_id in done.stdout
    finally:
        for p in paths:
            p.chmod(0o755 if p.is_dir() else 0o644)
    assert sorted((str(p), p.stat().st_mtime_ns) for p in [home, *home.rglob("*")]) == before


def test_show_prints_an_outputs_characters_as_they_are(tmp_path: Path) -> None:
    bindings = eh.BINDINGS.replace(
        '{x: "${summarise(d).done}"}', '{x: "héllo ${summarise(d).done}"}'
    )
    inputs = eh.write_inputs(tmp_path, n=1, bindings=bindings)
    home = ["--home", str(tmp_path / "home")]
    code, out, err = invoke("run", *files(inputs), "--yes", "--json", *home)
    assert code == 0, err
    run_id = json.loads(out.splitlines()[0])["run_id"]
    code, out, err = invoke("show", run_id, *home)
    assert code == 0, err
    assert '"héllo ' in out
    assert "\\u00e9" not in out
