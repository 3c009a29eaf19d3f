"""Write the problem for a named goal of the bio domain (stdlib only).

The inputs are named files: ``gene`` (one gene, FASTA or GenBank) and
``family`` (the family database, FASTA). The problem's objects are those names,
plus ``homologues`` (the gene's hits in the family) when both are given. The
initial state says which inputs exist and which programs are installed, as
:func:`detect_tools` finds them on PATH now, so the plan fits this machine.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from plansmith.errors import ProblemError

__all__ = [
    "DOMAIN_DIR",
    "DATA_DIR",
    "TOOLS",
    "BioGoal",
    "GOALS",
    "detect_tools",
    "problem_yaml",
    "write_problem",
    "server_config",
]

DOMAIN_DIR = Path(__file__).resolve().parent
DATA_DIR = DOMAIN_DIR / "data"

# tool constant of the domain -> executables that must all be on PATH (any one name each)
TOOLS: dict[str, tuple[tuple[str, ...], ...]] = {
    "blastn": (("blastn",), ("makeblastdb",), ("blastdbcmd",)),
    "mafft": (("mafft",),),
    "clustalo": (("clustalo", "clustal-omega"),),
    "fasttree": (("FastTree", "fasttree"),),
}


@dataclass(frozen=True, slots=True)
class BioGoal:
    """A named goal: its title (for people and the matcher), the inputs it needs, its atoms."""

    name: str
    title: str
    needs: tuple[str, ...]
    goal: tuple[str, ...]


GOALS: tuple[BioGoal, ...] = (
    BioGoal("gc_and_orf_summary", "GC and ORF summary", ("gene",), ("summarised(gene)",)),
    BioGoal(
        "homologues_of_gene",
        "homologues of this gene",
        ("gene", "family"),
        ("searched(gene, family)",),
    ),
    BioGoal(
        "phylogeny_of_sequences", "phylogeny of these sequences", ("family",), ("drawn(family)",)
    ),
    BioGoal("full_family_report", "full family report", ("gene", "family"), ("reported(gene)",)),
    BioGoal(
        "reviewed_family_report",
        "reviewed family report",
        ("gene", "family"),
        ("reported(gene)", "hits_reviewed(gene)"),
    ),
)


def _goal(name: str) -> BioGoal:
    wanted = name.strip().lower().replace("-", "_")
    for g in GOALS:
        if wanted in (g.name, g.title.lower(), g.title.lower().replace(" ", "_")):
            return g
    raise ProblemError(
        f"the bio domain has no goal {name!r}",
        hint="goals: " + "; ".join(f"{g.name} ({g.title!r})" for g in GOALS),
    )


def detect_tools(which: Callable[[str], str | None] = shutil.which) -> frozenset[str]:
    """The domain's tool constants whose programs are all on PATH."""
    return frozenset(
        tool
        for tool, programs in TOOLS.items()
        if all(any(which(name) for name in names) for names in programs)
    )


def problem_yaml(
    goal: str,
    inputs: Mapping[str, str | Path],
    *,
    available: Collection[str] | None = None,
    name: str | None = None,
) -> str:
    """The problem YAML for ``goal`` (its name or title) with ``inputs`` (``gene``,
    ``family``). ``available`` defaults to :func:`detect_tools`."""
    g = _goal(goal)
    missing = [n for n in g.needs if n not in inputs]
    if missing:
        raise ProblemError(
            f"goal {g.title!r} needs the input(s) {', '.join(missing)}",
            hint="pass gene=<FASTA or GenBank file> and/or family=<FASTA file>",
        )
    unknown = sorted(set(inputs) - {"gene", "family"})
    if unknown:
        raise ProblemError(
            f"unknown input name(s) {unknown}", hint="the inputs are gene and family"
        )
    tools = sorted(detect_tools() if available is None else set(available) & set(TOOLS))
    objects = [n for n in ("gene", "family") if n in inputs]
    init = [f"input({n})" for n in objects] + [f"available({t})" for t in tools]
    if "gene" in objects and "family" in objects:
        objects.append("homologues")
        init.append("homologue_set(homologues, gene, family)")
    lines = [
        f"problem: {name or g.name.replace('_', '-')}",
        "domain: bio",
        "# inputs: " + ", ".join(f"{k}={Path(v)}" for k, v in sorted(inputs.items())),
        "objects: {" + ", ".join(f"{o}: seqset" for o in objects) + "}",
        "init:",
        *(f"  - {atom}" for atom in init),
        "goal:",
        *(f"  - {atom}" for atom in g.goal),
    ]
    return "\n".join(lines) + "\n"


def write_problem(
    path: str | Path,
    goal: str,
    inputs: Mapping[str, str | Path],
    *,
    available: Collection[str] | None = None,
) -> Path:
    """Write :func:`problem_yaml` to ``path`` and return it."""
    target = Path(path)
    target.write_text(problem_yaml(goal, inputs, available=available), encoding="utf-8")
    return target


def server_config(
    inputs: Mapping[str, str | Path], run_root: str | Path, *, python: str | None = None
) -> dict[str, object]:
    """The ``mcpServers`` object that starts plansmith-bio over stdio with this Python,
    confined to ``run_root`` and the named ``inputs`` (all paths made absolute)."""
    named = {k: str(Path(v).resolve()) for k, v in inputs.items()}
    return {
        "mcpServers": {
            "bio": {
                "command": python or sys.executable,
                "args": ["-m", "plansmith.domains.bio.server"],
                "env": {
                    "PLANSMITH_BIO_RUN_ROOT": str(Path(run_root).resolve()),
                    "PLANSMITH_BIO_INPUTS": json.dumps(named, sort_keys=True),
                },
            }
        }
    }
