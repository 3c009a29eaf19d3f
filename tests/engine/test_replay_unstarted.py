"""``plansmith replay`` of a run that never started (it awaits approval)."""

from __future__ import annotations

from pathlib import Path

import _engine_helpers as eh


def test_replay_of_a_run_awaiting_approval_says_no_step_ran(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=1)
    home = str(tmp_path / "home")
    code, out, err = eh.invoke(
        "run", *eh.files(inputs), "--approve-tiers", "all", "--home", home, "--json"
    )
    assert code == 6, err
    run_id = (
        next(line for line in out.splitlines() if '"RunCreated"' in line)
        .split('"run_id":"')[1]
        .split('"')[0]
    )
    code, _, err = eh.invoke("replay", run_id, "--home", home)
    assert code == 0, err
    assert f"replayed run {run_id}: " in err
    assert "; no step ran (the run never started), as recorded" in err
    assert "part(s)" not in err
