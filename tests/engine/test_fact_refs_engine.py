"""``${fact(...)}`` through the real engine and the stdio counter server: ``summarise(d)``
fails, the replan puts ``summarise_alt(d)`` (which makes the same fact ``summarised(d)``
true) in its place, and ``index(d)``, which reads ``${fact(summarised(d)).done}``, gets
the alternative's output; an alternative whose binding lacks ``done`` fails the replan at
bind time, and the run's reason names both steps and the reference's place."""

from __future__ import annotations

import json
import re
from pathlib import Path

import _engine_helpers as eh

import plansmith.cli._run  # noqa: F401  (registers the commands on the app)

invoke, files = eh.invoke, eh.files

#: summarise always fails (its tool is ``fail``); index reads the fact, not summarise
FACT_BINDINGS = eh.BINDINGS.replace(
    '    tool: work\n    arguments: {name: "${d}"}',
    '    tool: fail\n    arguments: {message: "down"}',
    1,
).replace("${summarise(d).done}", "${fact(summarised(d)).done}")
#: summarise_alt's binding without the output index reads
ALT_WITHOUT_DONE = FACT_BINDINGS.replace(
    '{name: "alt-${d}"}\n    outputs: {done: "$.structured.done"}',
    '{name: "alt-${d}"}\n    outputs: {key: "$.structured.key"}',
)


def _run(tmp_path: Path, bindings: str) -> tuple[int, list[dict[str, object]], str]:
    inputs = eh.write_inputs(tmp_path, n=2, bindings=bindings)
    home = ["--home", str(tmp_path / "home")]
    code, out, err = invoke("run", *files(inputs), "--yes", "--json", *home)
    return code, [json.loads(line) for line in out.splitlines()], err


def test_the_replans_alternative_producer_feeds_the_fact_reference(tmp_path: Path) -> None:
    assert "${fact(summarised(d)).done}" in FACT_BINDINGS
    code, events, err = _run(tmp_path, FACT_BINDINGS)
    assert code == 0, err
    assert events[-1]["type"] == "RunFinished"
    assert events[-1]["state"] == "succeeded", events[-1]
    failed = {e["action"] for e in events if e["type"] == "StepFailed"}
    assert failed == {"summarise"}
    assert sum(e["type"] == "Replanned" for e in events) == 1
    done = {(e["action"], e["step"]): e["outputs"] for e in events if e["type"] == "StepSucceeded"}
    alt = {step: out for (action, step), out in done.items() if action == "summarise_alt"}
    index = {step: out for (action, step), out in done.items() if action == "index"}
    assert sorted(out["done"] for out in alt.values()) == ["alt-d0!", "alt-d1!"]  # type: ignore[index]
    # each index got the value of its own document's alternative
    assert sorted(out["value"] for out in index.values()) == ["alt-d0!", "alt-d1!"]  # type: ignore[index]
    assert all(step.startswith("r1.") for step in (*alt, *index))


def test_an_alternative_without_the_output_fails_naming_both_steps(tmp_path: Path) -> None:
    code, events, err = _run(tmp_path, ALT_WITHOUT_DONE)
    assert code == 5, err
    finished = events[-1]
    assert finished["type"] == "RunFinished"
    assert finished["state"] == "failed"
    reason = str(finished["reason"])
    assert "replanning failed: 2 binding problem(s):" in reason
    bindings = tmp_path / "bindings.yaml"
    for doc in ("d0", "d1"):
        found = re.search(
            rf"{re.escape(str(bindings))}:17:20 step (r1\.s\d+): \$\{{fact\(summarised\(d\)\)"
            rf"\.done\}}: step (r1\.s\d+) index\({doc}\) reads the output 'done' of step"
            rf" (r1\.s\d+) summarise_alt\({doc}\), which makes summarised\({doc}\) true,"
            " but the binding of 'summarise_alt' has no output 'done'",
            reason,
        )
        assert found is not None, reason
        reader, named, producer = found.groups()
        assert reader == named != producer
    assert f"(the binding of 'summarise_alt' is at {bindings}:13:14)" in reason
    assert not any(e["type"] == "Replanned" for e in events)
    assert not any(e["type"] == "StepStarted" and e["action"] == "index" for e in events)
    # plansmith show prints the problems below the run's last line
    code, out, err = invoke("show", str(events[0]["run_id"]), "--home", str(tmp_path / "home"))
    assert code == 0, err
    flat = " ".join(out.split())  # as the terminal's width wrapped it
    assert "but the binding of 'summarise_alt' has no output 'done'" in flat
    assert f"{bindings}:17:20" in flat


def test_the_live_view_shows_the_replans_binding_problems(tmp_path: Path) -> None:
    inputs = eh.write_inputs(tmp_path, n=2, bindings=ALT_WITHOUT_DONE)
    code, _, err = invoke("run", *files(inputs), "--yes", "--home", str(tmp_path / "home"))
    assert code == 5, err
    flat = " ".join(err.split())  # as the terminal's width wrapped it
    assert "replanning failed: 2 binding problem(s)" in flat
    assert "but the binding of 'summarise_alt' has no output 'done'" in flat
    assert f"{tmp_path / 'bindings.yaml'}:17:20" in flat
