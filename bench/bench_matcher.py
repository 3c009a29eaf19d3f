"""The offline goal matcher (``plansmith.planning.match_goal``) on a labelled request set.

The set, ``tests/planning/data/requests.jsonl``, holds requests over the shipped domains
that declare ``goals:`` (doc-pipeline, lab-prep, bio, code), one JSON object a line::

    {"domain": "doc-pipeline", "kind": "param", "request": "make notes and q3 searchable",
     "objects": {...optional, name: type...},
     "expect": {"goal": ["indexed(notes)", "indexed(q3)"]}}     # or "expect": null

``objects`` replaces the objects of the domain folder's problem.yaml (as ``make_plan``'s
``objects`` does); ``expect: null`` marks a request that must not be planned (out of the
domain, an object the domain does not have, a parameter left open). A request is
*planned* when the matcher is sure; it is planned *right* when its ground goal is the
expected one, as a set of literals.

Prints the table per domain and per kind, precision (right / planned) and recall (right
/ requests with a goal), and the time a call. Exits 1 when a request that must not be
planned is planned (out-of-domain ones included), 2 on a malformed set.

The sampling translator (a host model through MCP sampling) goes through the MCP face
(``plansmith.mcp``), not through ``plansmith.planning``: bench/bench_translator.py
evaluates it on this set, with scripted models.

Run: ``.venv/bin/python bench/bench_matcher.py [--misses] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plansmith.formats import load_domain, load_problem
from plansmith.model import Domain, TypedName
from plansmith.planning import GoalMatch, match_goal

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "tests" / "planning" / "data" / "requests.jsonl"
SHIPPED = (ROOT / "src" / "plansmith" / "examples", ROOT / "src" / "plansmith" / "domains")


@dataclass(frozen=True, slots=True)
class Row:
    domain: str
    kind: str
    request: str
    objects: Mapping[str, str] | None
    expect: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class Outcome:
    row: Row
    match: GoalMatch
    seconds: float

    @property
    def planned(self) -> bool:
        return self.match.sure

    @property
    def right(self) -> bool:
        expect = self.row.expect
        return self.planned and expect is not None and set(self.match.goal) == set(expect)

    @property
    def verdict(self) -> str:
        if self.row.expect is None:
            return "PLANNED (must not be)" if self.planned else "not planned (right)"
        if not self.planned:
            return "not planned"
        return "right" if self.right else "WRONG"


@dataclass(slots=True)
class Tally:
    requests: int = 0
    with_goal: int = 0
    right: int = 0
    wrong: int = 0
    not_planned: int = 0
    must_not: int = 0
    must_not_planned: int = 0
    out_of_domain: int = 0
    out_of_domain_planned: int = 0
    seconds: list[float] = field(default_factory=list)

    def add(self, o: Outcome) -> None:
        self.requests += 1
        self.seconds.append(o.seconds)
        if o.row.expect is None:
            self.must_not += 1
            self.must_not_planned += o.planned
            if o.row.kind == "out-of-domain":
                self.out_of_domain += 1
                self.out_of_domain_planned += o.planned
            return
        self.with_goal += 1
        if not o.planned:
            self.not_planned += 1
        elif o.right:
            self.right += 1
        else:
            self.wrong += 1

    @property
    def planned(self) -> int:
        return self.right + self.wrong + self.must_not_planned

    @property
    def precision(self) -> float:
        return self.right / self.planned if self.planned else 1.0

    @property
    def recall(self) -> float:
        return self.right / self.with_goal if self.with_goal else 1.0


def shipped_domains() -> dict[str, tuple[Domain, tuple[TypedName, ...]]]:
    """The shipped domains that declare goals, with their problem.yaml objects (if any)."""
    found: dict[str, tuple[Domain, tuple[TypedName, ...]]] = {}
    for base in SHIPPED:
        for path in sorted(base.glob("*/domain.yaml")):
            domain = load_domain(path)
            if not domain.goals:
                continue
            problem = path.parent / "problem.yaml"
            objects = load_problem(problem, domain).objects if problem.exists() else ()
            found[domain.name] = (domain, tuple(objects))
    return found


def load_rows(path: Path = SET) -> list[Row]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        data: dict[str, Any] = json.loads(line)
        unknown = set(data) - {"domain", "kind", "request", "objects", "expect"}
        if unknown or not isinstance(data.get("request"), str):
            raise ValueError(f"{path.name}:{n}: malformed row {data!r}")
        expect = data.get("expect")
        rows.append(
            Row(
                str(data["domain"]),
                str(data.get("kind", "")),
                data["request"],
                data.get("objects"),
                None if expect is None else tuple(expect["goal"]),
            )
        )
    return rows


def run(
    rows: Sequence[Row], domains: Mapping[str, tuple[Domain, tuple[TypedName, ...]]]
) -> list[Outcome]:
    outcomes = []
    for row in rows:
        domain, default = domains[row.domain]
        objects = (
            default
            if row.objects is None
            else tuple(TypedName(k, v) for k, v in row.objects.items())
        )
        started = time.perf_counter()
        match = match_goal(domain, row.request, objects)
        outcomes.append(Outcome(row, match, time.perf_counter() - started))
    return outcomes


def tally(outcomes: Sequence[Outcome], key: str | None = None) -> dict[str, Tally]:
    groups: dict[str, Tally] = {}
    for o in outcomes:
        name = "all" if key is None else str(getattr(o.row, key))
        groups.setdefault(name, Tally()).add(o)
    return groups


def _table(title: str, groups: Mapping[str, Tally]) -> None:
    print(
        f"\n| {title} | requests | with goal: right | wrong | not planned |"
        " must not plan: planned | out-of-domain: planned | precision | recall |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, t in groups.items():
        print(
            f"| {name} | {t.requests} | {t.right}/{t.with_goal} | {t.wrong} | {t.not_planned} |"
            f" {t.must_not_planned}/{t.must_not} |"
            f" {t.out_of_domain_planned}/{t.out_of_domain} |"
            f" {t.precision:.3f} | {t.recall:.3f} |"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, default=SET, help="the labelled set (JSON lines)")
    parser.add_argument("--misses", action="store_true", help="list each request not right")
    parser.add_argument("--json", action="store_true", help="print the totals as JSON")
    args = parser.parse_args(argv)
    domains = shipped_domains()
    try:
        rows = load_rows(args.set)
        missing = sorted({r.domain for r in rows} - set(domains))
        if missing:
            raise ValueError(f"no shipped domain with goals called {', '.join(missing)}")
    except (ValueError, KeyError, TypeError) as error:
        print(f"bench_matcher: {error}", file=sys.stderr)
        return 2
    outcomes = run(rows, domains)
    total = tally(outcomes)["all"]
    if args.json:
        print(
            json.dumps(
                {
                    k: getattr(total, k)
                    for k in (
                        "requests",
                        "with_goal",
                        "right",
                        "wrong",
                        "not_planned",
                        "must_not",
                        "must_not_planned",
                        "out_of_domain",
                        "out_of_domain_planned",
                        "precision",
                        "recall",
                    )
                }
            )
        )
    else:
        print(
            "shipped domains with goals: "
            + ", ".join(
                f"{name} ({', '.join(g.name for g in d.goals)})" for name, (d, _) in domains.items()
            )
        )
        _table("domain", {**tally(outcomes, "domain"), **tally(outcomes)})
        _table("kind", tally(outcomes, "kind"))
        us = [s * 1e6 for s in total.seconds]
        print(
            f"\nmatch_goal: median {statistics.median(us):.0f} µs,"
            f" max {max(us):.0f} µs a call ({len(us)} calls)"
        )
        print("sampling translator, with scripted models: bench/bench_translator.py")
    if args.misses:
        for o in outcomes:
            if o.verdict not in ("right", "not planned (right)"):
                got = list(o.match.goal) if o.planned else o.match.reason
                print(f"- [{o.row.domain}/{o.row.kind}] {o.row.request!r}: {o.verdict}: {got}")
    return 1 if total.must_not_planned else 0


if __name__ == "__main__":
    sys.exit(main())
