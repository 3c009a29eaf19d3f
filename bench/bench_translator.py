"""The sampling translator (``make_plan(request=..., translator="sampling")``: the host's
model through MCP sampling) on bench_matcher.py's labelled set, with scripted models.

Each request of ``tests/planning/data/requests.jsonl`` goes through plansmith's MCP face
in process (the SDK ``Client`` over ``build_face_server``, protocol 2026-07-28, where
sampling is an input-required round trip), with ``objects`` as the row gives them. The
host's model is a sampling callback that answers as scripted; everything after it is the
real translator: the prompt, the reading of the answer, its validation against the
domain, the one repair call, and ``make_plan``'s answer. Only what follows a translation
is left out: the service is asked to plan the translated goal and answers ``planned``
with it, without planning it or binding its tools (which would start tool servers and,
for bio and code, need input files; neither is the translator's work).

The scripted behaviours, each reported on its own line:

- ``right``: the labelled goal, as the prompt asks (``{"goal": [...]}``); for a request
  that must not be planned (``expect: null``: out of the domain, an object the domain
  does not have, a parameter left open), the prompt's "no goal" answer
  ``{"goal": [], "reason": "..."}``;
- ``wrong``: a goal naming an object (``nosuchthing``) or a predicate (``nosuchpred``) the
  domain does not have, in turn; for a request that must not be planned, a goal over a
  word of the request that is not an object of the domain. Every such goal is invalid: the
  translator must refuse it (0 planned), with a reason;
- ``malformed``: prose, or JSON that does not parse, in turn: refused, with a reason;
- ``wrong-but-valid`` (for the record, no bar): the labelled goal when there is one, and
  for a request that must not be planned a real goal of the domain over its objects.
  Validation cannot tell such a goal from the right one: this line shows what a model
  that invents a plausible goal gets through (the offline matcher's line is the other
  side).

The model answers the same way when asked again (the repair call). A request is
*planned* when ``make_plan`` answers ``planned``; *refused* when it answers
``needs_choice`` (the model's "no goal", with its reason) or a typed tool error (a goal
refused twice, with the refusals). Precision is right / planned, recall right / requests
with a goal; "invalid planned" counts goals planned that the domain does not have.

Exits 1 when a bar is missed: an invalid goal planned (``wrong``, ``malformed``), a
request that must not be planned planned by ``right``, ``wrong`` or ``malformed``, more
than 2 model calls for a request, a refusal without a reason, or ``right``'s recall below
the offline matcher's on the same set. 2 on a malformed set.

Run: ``.venv/bin/python bench/bench_translator.py [--misses] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_matcher import SET, Row, load_rows, shipped_domains
from bench_matcher import run as run_matcher
from bench_matcher import tally as tally_matcher

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "src" / "plansmith" / "examples"
BEHAVIOURS = ("right", "wrong", "malformed", "wrong-but-valid")
BARRED = ("right", "wrong", "malformed")  # the bars hold for these; the last is a record
NO_SUCH_OBJECT = "nosuchthing"
NO_SUCH_PREDICATE = "nosuchpred"
MAX_CALLS = 2


@dataclass(frozen=True, slots=True)
class Outcome:
    behaviour: str
    row: Row
    status: str  # planned | needs_choice | refused
    goal: tuple[str, ...]
    reason: str
    calls: int
    answer: str  # the scripted model's answer
    valid_answer: bool  # whether that answer is a goal of the domain over its objects

    @property
    def planned(self) -> bool:
        return self.status == "planned"

    @property
    def right(self) -> bool:
        expect = self.row.expect
        return self.planned and expect is not None and set(self.goal) == set(expect)


@dataclass(slots=True)
class Tally:
    requests: int = 0
    with_goal: int = 0
    planned: int = 0
    right: int = 0
    must_not: int = 0
    must_not_planned: int = 0
    out_of_domain: int = 0
    out_of_domain_planned: int = 0
    invalid_planned: int = 0
    needs_choice: int = 0
    typed_error: int = 0
    refused_without_reason: int = 0
    calls: list[int] = field(default_factory=list)

    def add(self, o: Outcome) -> None:
        self.requests += 1
        self.calls.append(o.calls)
        self.planned += o.planned
        self.right += o.right
        self.invalid_planned += o.planned and not o.valid_answer
        self.needs_choice += o.status == "needs_choice"
        self.typed_error += o.status == "refused"
        self.refused_without_reason += not o.planned and not o.reason.strip()
        if o.row.expect is None:
            self.must_not += 1
            self.must_not_planned += o.planned
            if o.row.kind == "out-of-domain":
                self.out_of_domain += 1
                self.out_of_domain_planned += o.planned
        else:
            self.with_goal += 1

    @property
    def precision(self) -> float:
        return self.right / self.planned if self.planned else 1.0

    @property
    def recall(self) -> float:
        return self.right / self.with_goal if self.with_goal else 1.0

    @property
    def max_calls(self) -> int:
        return max(self.calls, default=0)

    @property
    def mean_calls(self) -> float:
        return sum(self.calls) / len(self.calls) if self.calls else 0.0

    def as_dict(self) -> dict[str, Any]:
        counts = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "calls"}
        return {
            **counts,
            "precision": self.precision,
            "recall": self.recall,
            "mean_calls": self.mean_calls,
            "max_calls": self.max_calls,
        }


# -- the scripted model ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Domain:
    """What the script needs of a domain: its predicates, and its default objects."""

    predicates: frozenset[str]
    objects: Mapping[str, str]


def _objects(row: Row, domain: Domain) -> Mapping[str, str]:
    return row.objects if row.objects is not None else domain.objects


def _literal(text: str) -> tuple[str, list[str]]:
    name, _, rest = text.partition("(")
    return name.strip(), [a.strip() for a in rest.rstrip(")").split(",") if a.strip()]


def _ground(name: str, args: Sequence[str]) -> str:
    return f"{name}({', '.join(args)})"


def _word_not_an_object(row: Row, domain: Domain) -> str:
    """The request's last word that is no object of the domain (what a model that takes
    the request at its word would name)."""
    objects = set(_objects(row, domain))
    words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9_]*", row.request)]
    for word in reversed(words):
        if word not in objects and word not in domain.predicates:
            return word
    return NO_SUCH_OBJECT


def _valid_goal(row: Row, rows: Sequence[Row]) -> tuple[str, ...] | None:
    """A labelled goal of the same domain over the same objects (a real goal)."""
    for other in rows:
        same = other.domain == row.domain and other.objects == row.objects
        if same and other.expect is not None:
            return other.expect
    return None


def script(behaviour: str, row: Row, n: int, domain: Domain, rows: Sequence[Row]) -> str:
    """The scripted model's answer to the ``n``-th request of the set (the same when
    asked again)."""
    expect = row.expect
    if behaviour == "malformed":
        if n % 2:
            return '{"goal": ["' + (expect or ("something",))[0] + '"'  # cut short
        return "Sure! I would make that happen for you, step by step."
    if behaviour == "right" or (behaviour == "wrong-but-valid" and expect is not None):
        if expect is None:
            return json.dumps({"goal": [], "reason": "the request is not a goal of this domain"})
        return json.dumps({"goal": list(expect)})
    if behaviour == "wrong-but-valid":
        return json.dumps({"goal": list(_valid_goal(row, rows) or ())})
    if expect is None:  # wrong: a goal over a word of the request
        predicate = sorted(domain.predicates)[0]
        return json.dumps({"goal": [f"{predicate}({_word_not_an_object(row, domain)})"]})
    name, args = _literal(expect[0])
    wrong = (
        _ground(NO_SUCH_PREDICATE, args)
        if n % 2
        else _ground(name, [NO_SUCH_OBJECT, *args[1:]] if args else [NO_SUCH_OBJECT])
    )
    return json.dumps({"goal": [wrong, *expect[1:]]})


# -- the face, and one request through it ---------------------------------------------


def _folders() -> dict[str, Any]:
    from plansmith.domains.folders import load_folders, shipped_domain_dirs

    dirs = [EXAMPLES / "doc-pipeline", EXAMPLES / "lab-prep", *shipped_domain_dirs()]
    return load_folders(dirs)


def _service(home: Path) -> Any:
    """A ``FaceService`` whose ``make_plan`` answers ``planned`` with the translated goal
    (see the module docstring): the translation, not the planning, is measured."""
    from plansmith.engine import Engine
    from plansmith.mcp import FaceService, PlanResult

    class TranslatedOnly(FaceService):
        async def make_plan(self, domain: str, **kwargs: Any) -> Any:
            translation = kwargs.get("translation")
            if translation is None:  # no model answer: not the translator's path
                raise AssertionError("make_plan was not given a translation")
            return PlanResult("planned", domain, translation)

    return TranslatedOnly.on(Engine(home), _folders())


def _valid(service: Any, row: Row, answer: str) -> bool:
    """Whether the scripted answer is a goal of the domain over the row's objects."""
    from plansmith.errors import PlansmithError

    try:
        data = json.loads(answer)
    except json.JSONDecodeError:
        return False
    goal = data.get("goal") if isinstance(data, dict) else None
    if not isinstance(goal, list) or not goal:
        return False
    try:
        service.validate_goal(row.domain, goal=goal, objects=row.objects)
    except PlansmithError:
        return False
    return True


async def evaluate(rows: Sequence[Row], behaviours: Sequence[str] = BEHAVIOURS) -> list[Outcome]:
    """Every row through ``make_plan`` with each scripted behaviour."""
    from mcp import Client
    from mcp.types import CreateMessageResult, TextContent

    from plansmith.mcp import build_face_server

    domains = {
        name: Domain(frozenset(p.name for p in d.predicates), {o.name: o.type for o in objs})
        for name, (d, objs) in shipped_domains().items()
    }
    now: dict[str, Any] = {"answer": "", "calls": 0}

    async def model(ctx: Any, params: Any) -> CreateMessageResult:
        now["calls"] += 1
        text = TextContent(type="text", text=now["answer"])
        return CreateMessageResult(role="assistant", model="scripted", content=text)

    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory() as home:
        service = _service(Path(home))
        server = build_face_server(service, env={})
        async with Client(server, sampling_callback=model) as client:
            for behaviour in behaviours:
                for n, row in enumerate(rows):
                    answer = script(behaviour, row, n, domains[row.domain], rows)
                    now.update(answer=answer, calls=0)
                    args: dict[str, Any] = {
                        "domain": row.domain,
                        "request": row.request,
                        "translator": "sampling",
                    }
                    if row.objects is not None:
                        args["objects"] = dict(row.objects)
                    result = await client.call_tool("make_plan", args)
                    outcome = _outcome(
                        behaviour, row, result, calls=now["calls"], answer=answer, service=service
                    )
                    outcomes.append(outcome)
    return outcomes


def _outcome(
    behaviour: str, row: Row, result: Any, *, calls: int, answer: str, service: Any
) -> Outcome:
    valid = _valid(service, row, answer)
    if result.is_error:
        reason = result.content[0].text if result.content else ""
        return Outcome(behaviour, row, "refused", (), reason, calls, answer, valid)
    data = result.structured_content
    translation = data["translation"]
    return Outcome(
        behaviour,
        row,
        data["status"],
        tuple(translation["goal"]),
        translation.get("reason") or "",
        calls,
        answer,
        valid,
    )


# -- the bars and the table ------------------------------------------------------------


def tally(outcomes: Sequence[Outcome]) -> dict[str, Tally]:
    groups: dict[str, Tally] = {}
    for o in outcomes:
        groups.setdefault(o.behaviour, Tally()).add(o)
    return groups


def matcher_recall(rows: Sequence[Row]) -> float:
    return tally_matcher(run_matcher(rows, shipped_domains()))["all"].recall


def missed(groups: Mapping[str, Tally], matcher: float) -> list[str]:
    """Every bar missed, said."""
    problems = []
    for behaviour, t in groups.items():
        if t.max_calls > MAX_CALLS:
            problems.append(f"{behaviour}: {t.max_calls} model calls for a request")
        if behaviour not in BARRED:
            continue
        if t.invalid_planned:
            problems.append(f"{behaviour}: {t.invalid_planned} invalid goal(s) planned")
        if t.must_not_planned:
            problems.append(f"{behaviour}: {t.must_not_planned} request(s) planned that must not")
        if t.refused_without_reason:
            problems.append(f"{behaviour}: {t.refused_without_reason} refusal(s) without a reason")
    right = groups.get("right")
    if right is not None and right.recall < matcher:
        problems.append(f"right: recall {right.recall:.3f} < the offline matcher's {matcher:.3f}")
    return problems


def _table(groups: Mapping[str, Tally], matcher: float) -> None:
    print(
        "| model behaviour | requests | planned | planned right | precision | recall |"
        " must not plan: planned | out-of-domain: planned | invalid goals planned |"
        " refused: needs_choice, typed error | refusals without a reason |"
        " model calls a request: mean, max |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, t in groups.items():
        print(
            f"| {name} | {t.requests} | {t.planned} | {t.right}/{t.with_goal} |"
            f" {f'{t.precision:.3f}' if t.planned else 'n/a'} | {t.recall:.3f} |"
            f" {t.must_not_planned}/{t.must_not} |"
            f" {t.out_of_domain_planned}/{t.out_of_domain} | {t.invalid_planned} |"
            f" {t.needs_choice}, {t.typed_error} | {t.refused_without_reason} |"
            f" {t.mean_calls:.2f}, {t.max_calls} |"
        )
    print(f"\noffline matcher on the same set: recall {matcher:.3f} (bench_matcher.py)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, default=SET, help="the labelled set (JSON lines)")
    parser.add_argument("--misses", action="store_true", help="list each request not right")
    parser.add_argument("--json", action="store_true", help="print the totals as JSON")
    args = parser.parse_args(argv)
    try:
        rows = load_rows(args.set)
        missing = sorted({r.domain for r in rows} - set(shipped_domains()))
        if missing:
            raise ValueError(f"no shipped domain with goals called {', '.join(missing)}")
    except (ValueError, KeyError, TypeError) as error:
        print(f"bench_translator: {error}", file=sys.stderr)
        return 2
    outcomes = anyio.run(evaluate, rows)
    groups = tally(outcomes)
    matcher = matcher_recall(rows)
    problems = missed(groups, matcher)
    if args.json:
        document = {
            "behaviours": {k: t.as_dict() for k, t in groups.items()},
            "matcher_recall": matcher,
            "missed": problems,
        }
        print(json.dumps(document, indent=2))
    else:
        _table(groups, matcher)
        for problem in problems:
            print(f"MISSED: {problem}")
    if args.misses:
        for o in outcomes:
            expected = o.right or (o.row.expect is None and not o.planned)
            if o.behaviour == "right" and not expected:
                got = list(o.goal) if o.planned else o.reason
                print(f"- [{o.row.domain}/{o.row.kind}] {o.row.request!r}: {o.status}: {got}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
