"""GTPyhop's example doctests or its example audit, in their own process, with the
real GTPyhop 2.0.2 or with plansmith's stand-in in its exact mode (issue 34).

``python _gtpyhop_examples_child.py real|exact doctests`` runs the doctests of
every module under ``gtpyhop/examples`` that has any, and prints
``{module: [failed, attempted]}``; ``... real|exact audit FOLDER...`` runs the
example audit's checks with planning on (``audit_example(FOLDER, plan=True)``,
what ``python -m gtpyhop.examples.audit FOLDER --plan`` reports) and prints
``{folder: [finding, ...]}``. The output is one line ``EXAMPLES-JSON ...``.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib
import importlib.machinery
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("GTPYHOP_QUIET", "true")


def _doctests(examples: Path) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for path in sorted(examples.rglob("*.py")):
        if "__pycache__" in path.parts or ">>>" not in path.read_text(encoding="utf-8"):
            continue
        parts = path.relative_to(examples).with_suffix("").parts
        name = ".".join(("gtpyhop", "examples", *parts))
        with contextlib.redirect_stdout(io.StringIO()):
            module = importlib.import_module(name)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
            for test in doctest.DocTestFinder().find(module):
                runner.run(test, out=lambda text: None)
            failed, attempted = runner.summarize(verbose=False)
        found[name] = [failed, attempted]
    return found


def _audit(folders: list[str]) -> dict[str, list[str]]:
    audit: Any = importlib.import_module("gtpyhop.examples.audit")
    found = {}
    for folder in folders:
        with contextlib.redirect_stdout(io.StringIO()):
            findings, _ = audit.audit_example(folder, plan=True)
        found[folder] = sorted(str(f) for f in findings)
    return found


def main() -> None:
    planner, what = sys.argv[1], sys.argv[2]
    if planner == "exact":
        from plansmith.compat import gtpyhop as stand_in

        stand_in.set_exact_gtpyhop(True)
        with contextlib.redirect_stdout(io.StringIO()):
            stand_in.set_verbose_level(0)
        sys.modules["gtpyhop"] = stand_in
    else:
        with contextlib.redirect_stdout(io.StringIO()):
            importlib.import_module("gtpyhop")
    spec = importlib.machinery.PathFinder.find_spec("gtpyhop")
    assert spec is not None
    assert spec.origin is not None
    examples = Path(spec.origin).parent / "examples"
    result: Any = _doctests(examples) if what == "doctests" else _audit(sys.argv[3:])
    sys.stdout.write("EXAMPLES-JSON " + json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
