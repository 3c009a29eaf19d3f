"""Our PDDL reader against the ``pddl`` package (0.5.1) on the benchmark tasks.

The issue asks: normalise the input for the ``pddl`` package, or write a small
tolerant reader, and measure which is better. In one run, for each task of the
suite (by default the IPC tasks of the ``pddl`` 0.5.1 sdist, fetched into a cache
outside the repository by bench/ipc_tasks.py; ``--suite DIR`` or
$PLANSMITH_PDDL_BENCHMARKS for your own), this parses the domain and the problem with

  (a) plansmith's reader (``plansmith.formats._pddl``), and
  (b) the ``pddl`` package after a normalising pass (lower-case the text, and
      add ``:typing`` to a domain that uses ``(:types`` without declaring it),

and, for reference, (c) the ``pddl`` package on the raw files. It prints, per
domain, the CPU time to parse its tasks (domain + problem, best of
``--repeat`` runs per task, normalisation included in (b), the ``pddl``
package's parser construction not included: it is reported apart), the coverage, the
ratio of (b) to (a), and whether both readers agree on the numbers of actions,
objects and init facts.

``pddl`` is a dev dependency, used here only; plansmith never imports it. (The default
suite comes from the same package's test fixtures, so the package reads it as it is; the
benchmark's old suite, pyperplan's copies of the IPC tasks, had upper-case keywords and
an undeclared ``:typing`` that it rejected.)

    .venv/bin/python bench/bench_pddl_readers.py [--repeat N] [--only PATTERN] [--suite DIR]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pddl.parser.domain import DomainParser
from pddl.parser.problem import ProblemParser

import ipc_tasks
from plansmith.errors import PlansmithError
from plansmith.formats._pddl import parse_pddl_domain, parse_pddl_problem

Counts = tuple[int, int, int]  # actions, objects, init facts


def normalise(text: str, *, domain: bool) -> str:
    """What the ``pddl`` package needs: lower case, and ``:typing`` when types are used."""
    text = text.lower()
    if domain and "(:types" in text and ":typing" not in text:
        if "(:requirements" in text:
            text = text.replace("(:requirements", "(:requirements :typing", 1)
        else:
            header = r"(\(define\s*\(domain[^)]*\))"
            text = re.sub(header, r"\1 (:requirements :typing)", text, count=1)
    return text


def ours(domain_text: str, problem_text: str) -> Counts:
    domain = parse_pddl_domain(domain_text)
    problem = parse_pddl_problem(problem_text, domain)
    return len(domain.actions), len(problem.objects), len(problem.init)


def ours_prepared(domain_text: str, problem_text: str) -> Callable[[], Counts]:
    return lambda: ours(domain_text, problem_text)


def theirs_prepared(
    domain_text: str, problem_text: str, *, normalised: bool
) -> Callable[[], Counts]:
    """Fresh parsers (their transformers keep state between calls), built before timing."""
    domain_parser, problem_parser = DomainParser(), ProblemParser()

    def run() -> Counts:
        d_text, p_text = domain_text, problem_text
        if normalised:
            d_text = normalise(d_text, domain=True)
            p_text = normalise(p_text, domain=False)
        domain: Any = domain_parser(d_text)
        problem: Any = problem_parser(p_text)
        return len(domain.actions), len(problem.objects), len(problem.init)

    return run


def grammar_build_seconds(repeat: int) -> float:
    """CPU time to build the ``pddl`` package's two Lark parsers (not counted above)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        DomainParser()
        ProblemParser()
        times.append(time.process_time() - start)
    return min(times)


@dataclass
class Result:
    seconds: list[float] = field(default_factory=list)
    counts: list[Counts | None] = field(default_factory=list)

    @property
    def parsed(self) -> int:
        return sum(c is not None for c in self.counts)


def measure(
    prepare: Callable[[], Callable[[], Counts]], repeat: int, errors: type[Exception]
) -> tuple[float, Counts | None]:
    """Best CPU time of ``repeat`` runs, and the counts (None if it raised ``errors``).

    ``prepare`` runs before the clock starts and returns what is timed.
    """
    best = float("inf")
    counts: Counts | None = None
    for _ in range(repeat):
        parse = prepare()
        start = time.process_time()
        try:
            counts = parse()
        except errors:
            counts = None
        best = min(best, time.process_time() - start)
        if counts is None:
            break
    return best, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--only", default="", metavar="PATTERN", help="comma-separated: domain or domain/pNN"
    )
    ipc_tasks.add_suite_option(parser, "--suite", "--bench")
    args = parser.parse_args()
    suite = ipc_tasks.resolve(args.suite)
    selection = ipc_tasks.load(suite, [p for p in args.only.split(",") if p])
    print(f"suite: {suite} ({len(selection)} tasks)")
    rows = []
    ratios = []
    total = {"ours": 0.0, "norm": 0.0}
    covered = {"ours": 0, "norm": 0, "raw": 0, "tasks": 0, "agree": 0}
    for name in dict.fromkeys(t.domain for t in selection):
        tasks = [t for t in selection if t.domain == name]
        domain_text = tasks[0].domain_file.read_text()
        results = {"ours": Result(), "norm": Result(), "raw": Result()}
        for task in tasks:
            problem_text = task.problem_file.read_text()
            runs: dict[str, Callable[[], Callable[[], Counts]]] = {
                "ours": partial(ours_prepared, domain_text, problem_text),
                "norm": partial(theirs_prepared, domain_text, problem_text, normalised=True),
                "raw": partial(theirs_prepared, domain_text, problem_text, normalised=False),
            }
            for key, run in runs.items():
                # ours may raise only plansmith errors; the peer raises lark's and its own
                errors = PlansmithError if key == "ours" else Exception
                seconds, counts = measure(run, args.repeat if key != "raw" else 1, errors)
                results[key].seconds.append(seconds)
                results[key].counts.append(counts)
        n = len(results["ours"].counts)
        agree = sum(
            a is not None and a == b
            for a, b in zip(results["ours"].counts, results["norm"].counts, strict=True)
        )
        t_ours, t_norm = sum(results["ours"].seconds), sum(results["norm"].seconds)
        ratio = t_norm / t_ours if t_ours > 0 else float("nan")
        ratios.append(ratio)
        rows.append(
            (name, n, results["ours"].parsed, results["norm"].parsed, results["raw"].parsed,
             agree, t_ours * 1000, t_norm * 1000, ratio)
        )  # fmt: skip
        total["ours"] += t_ours
        total["norm"] += t_norm
        for key in ("ours", "norm", "raw"):
            covered[key] += results[key].parsed
        covered["tasks"] += n
        covered["agree"] += agree
    head = (
        f"{'domain':<10} {'tasks':>5} {'ours ok':>7} {'norm ok':>7} {'raw ok':>6} {'agree':>5}"
        f" {'ours ms':>8} {'pddl+norm ms':>12} {'ratio':>6}"
    )
    print(head)
    print("-" * len(head))
    for name, n, ok_a, ok_b, ok_c, agree, ms_a, ms_b, ratio in rows:
        print(
            f"{name:<10} {n:>5} {ok_a:>7} {ok_b:>7} {ok_c:>6} {agree:>5}"
            f" {ms_a:>8.1f} {ms_b:>12.1f} {ratio:>5.1f}x"
        )
    print("-" * len(head))
    overall = total["norm"] / total["ours"] if total["ours"] > 0 else float("nan")
    print(
        f"{'all':<10} {covered['tasks']:>5} {covered['ours']:>7} {covered['norm']:>7}"
        f" {covered['raw']:>6} {covered['agree']:>5} {total['ours'] * 1000:>8.1f}"
        f" {total['norm'] * 1000:>12.1f} {overall:>5.1f}x"
    )
    print(
        f"\nCPU time per task = domain + problem parse, best of {args.repeat};"
        f" geometric mean of per-domain ratios: {statistics.geometric_mean(ratios):.1f}x"
    )
    print("ratio = pddl+norm / ours (higher: ours is faster)")
    print("raw ok = tasks the pddl package parses from the files as they are")
    print(
        f"building the pddl package's parsers (once per process, not counted above):"
        f" {grammar_build_seconds(args.repeat) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
