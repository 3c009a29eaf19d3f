"""``--log``, ``--executor`` and ``--scheduler`` on the run commands, as a user calls them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))

import _engine_helpers as eh

import _pg_server
import plansmith.cli._run  # noqa: F401  (registers the commands on the app)

invoke, files = eh.invoke, eh.files


def test_dask_executor_without_a_scheduler_is_refused_with_a_hint(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    code, _, err = invoke("run", *files(inputs), "--executor", "dask", "--home", str(tmp_path))
    assert code == 2
    assert "--scheduler tcp://HOST:PORT" in err


def test_unknown_executor_and_stray_scheduler_are_refused(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    code, _, err = invoke("run", *files(inputs), "--executor", "ray", "--home", str(tmp_path))
    assert (code, "unknown" in err) == (2, True)
    code, _, err = invoke(
        "run", *files(inputs), "--scheduler", "tcp://127.0.0.1:1", "--home", str(tmp_path)
    )
    assert (code, "only for --executor dask" in err) == (2, True)


def test_unknown_log_scheme_is_refused(tmp_path: Path) -> None:
    code, _, err = invoke("runs", "--log", "mysql://x@127.0.0.1/db", "--home", str(tmp_path))
    assert code == 2, err


def test_sqlite_log_path_holds_the_run_instead_of_the_home_default(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    log = tmp_path / "elsewhere.db"
    home = ["--home", str(tmp_path / "home")]
    code, out, err = invoke("run", *files(inputs), "--yes", "--json", "--log", str(log), *home)
    assert code == 0, err
    run_id = json.loads(out.splitlines()[0])["run_id"]
    assert log.is_file()
    assert not (tmp_path / "home" / "runs.db").exists()
    code, out, _ = invoke("runs", "--log", str(log), *home)
    assert (code, run_id in out) == (0, True)


def test_postgresql_log_is_shared_by_run_runs_show_and_replay(tmp_path: Path) -> None:
    with _pg_server.fresh_schema() as url:
        inputs = eh.write_inputs(tmp_path, n=1)
        home = ["--home", str(tmp_path / "home"), "--log", url]
        code, out, err = invoke("run", *files(inputs), "--yes", "--json", *home)
        assert code == 0, err
        run_id = json.loads(out.splitlines()[0])["run_id"]
        assert not (tmp_path / "home" / "runs.db").exists()
        code, out, _ = invoke("runs", *home)
        assert (code, run_id in out, "succeeded" in out) == (0, True, True)
        code, out, _ = invoke("show", run_id, *home)
        assert (code, "summarise(d0)" in out) == (0, True)
        code, out, _ = invoke("replay", run_id, *home)
        assert code == 0
        assert json.loads(out.splitlines()[-1])["type"] == "RunFinished"
