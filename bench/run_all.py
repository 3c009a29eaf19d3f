"""Run every benchmark in bench/, one after the other (``make bench``).

Each benchmark runs plansmith and its peer in the same run and prints the ratio;
docs/benchmarks.md records the figures and the command that produced them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = [
    "bench_pddl_readers.py",
    "bench_classical.py",
    "bench_astar.py",
    "bench_htn.py",
    "bench_gtpyhop_entry.py",
    "bench_executor.py",
    "bench_lab.py",
    "bench_drug_target.py",
    "bench_bio.py",
    "bench_warm.py",
    "bench_corpus.py",
    "bench_dask.py",
    "bench_matcher.py",
    "chaos.py",
]


#: the compiled build (``make compiled``); when it is there, the executor's benchmark runs
#: under it as well
COMPILED = HERE.parent / ".venv-compiled" / "bin" / "python"


def main() -> int:
    failed = 0
    for name in ORDER:
        script = HERE / name
        if not script.exists():
            continue
        pythons = [sys.executable]
        if name == "bench_executor.py" and COMPILED.exists():
            pythons.append(str(COMPILED))
        for python in pythons:
            print(f"\n=== {name} ({python})", flush=True)
            failed += subprocess.run([python, str(script)], check=False).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
