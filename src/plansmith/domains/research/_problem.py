"""Write the problem of a research question for the research domain (stdlib only).

:func:`problem_for` classifies the question, proposes subquestions, keeps or
drops each by the rules (recording why), and writes the problem YAML: one
``subquestion`` object per kept subquestion, one ``source`` object per source,
and the task ``research(q)``. What the planner does not need but the runner and
the report do (the question, the subquestions' texts and queries, the
decisions, the budget, which object is which source) is kept in the problem's
header as one JSON comment line, ``# research: {...}``, that
:func:`read_research_header` reads back. The budget is also applied by the
rules: a problem never holds more subquestions, or searches, than it allows.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from plansmith.domains.research._questions import MAX_QUESTION_BYTES, Question, classify
from plansmith.domains.research._subquestions import (
    Budget,
    Decision,
    Subquestion,
    propose,
    select,
)
from plansmith.errors import Location, ProblemError

__all__ = [
    "ResearchProblem",
    "research_problem",
    "problem_yaml",
    "problem_for",
    "read_research_header",
    "source_object",
    "check_question",
]

_HEADER = "# research: "


@dataclass(frozen=True, slots=True)
class ResearchProblem:
    """A research question made ready for the planner (see the module)."""

    name: str
    question: Question
    subquestions: tuple[Subquestion, ...]
    decisions: tuple[Decision, ...]
    budget: Budget
    sources: tuple[tuple[str, str], ...]  # (object name, source name)
    extra: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "question": asdict(self.question),
            "subquestions": [asdict(s) for s in self.subquestions],
            "decisions": [asdict(d) for d in self.decisions],
            "budget": asdict(self.budget),
            "sources": [list(s) for s in self.sources],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> ResearchProblem:
        q = data["question"]
        return ResearchProblem(
            name=data["name"],
            question=Question.from_json(q),
            subquestions=tuple(Subquestion(**s) for s in data["subquestions"]),
            decisions=tuple(Decision(**d) for d in data["decisions"]),
            budget=Budget(**data["budget"]),
            sources=tuple((a, b) for a, b in data["sources"]),
        )


def check_question(question: str) -> None:
    """Refuse an empty question or one over :data:`MAX_QUESTION_BYTES` (a ``ProblemError``
    with a hint), before anything is made for it."""
    if not isinstance(question, str) or not question.strip():
        raise ProblemError(
            "the research question is empty",
            location=Location(argument="question"),
            hint='ask a question, e.g. "When was tomllib added?"',
        )
    size = len(question.encode("utf-8", "replace"))
    if size > MAX_QUESTION_BYTES:
        raise ProblemError(
            f"the research question is {size} bytes, over the limit of {MAX_QUESTION_BYTES}",
            location=Location(argument="question"),
            hint="ask a shorter question; put long material in a source folder (--source)",
        )


def source_object(source: str) -> str:
    """The problem's object name for a source name (``python-docs`` -> ``src_python_docs``)."""
    return "src_" + (re.sub(r"[^a-z0-9]+", "_", source.lower()).strip("_") or "x")


def research_problem(
    question: str,
    sources: Sequence[str],
    budget: Budget | None = None,
    *,
    extra: Iterable[str] = (),
    proposed: Iterable[str] = (),
) -> ResearchProblem:
    """Classify ``question``, propose and filter its subquestions (``extra``: more
    proposals, as plain questions; ``proposed``: a model's, facet ``model``), over
    ``sources`` (their names)."""
    check_question(question)
    names = list(dict.fromkeys(sources))
    if not names:
        raise ProblemError(
            "a research problem needs at least one source",
            hint="name the corpus servers to search (--source NAME)",
        )
    objects = [source_object(s) for s in names]
    if len(set(objects)) != len(objects):
        raise ProblemError(
            f"two source names give the same object name: {names}",
            hint="name the sources so that they differ in letters or digits",
        )
    budget = budget or Budget()
    classified = classify(question)
    candidates = propose(classified)
    candidates += [
        Subquestion("", facet, " ".join(t.split()), " ".join(t.split()).rstrip("?"))
        for facet, texts in (("extra", extra), ("model", proposed))
        for t in texts
        if t.strip()
    ]
    kept, decisions = select(classified, candidates, budget, len(names))
    digest = hashlib.sha256(classified.text.encode()).hexdigest()[:8]
    return ResearchProblem(
        name=f"research-{digest}",
        question=classified,
        subquestions=tuple(kept),
        decisions=tuple(decisions),
        budget=budget,
        sources=tuple(zip(objects, names, strict=True)),
    )


def problem_yaml(problem: ResearchProblem) -> str:
    """The problem file (YAML) of ``problem``, its header included."""
    header = json.dumps(problem.to_json(), sort_keys=True, ensure_ascii=True)
    objects = ["q: question"]
    objects += [f"{s.id}: subquestion" for s in problem.subquestions]
    objects += [f"{obj}: source" for obj, _ in problem.sources]
    q = problem.question
    init = [f"asks_{q.kind}(q)", "drafting(q)"]
    if any(p.kind == "compare" for p in q.parts):
        init.append("has_comparison(q)")
    for s in problem.subquestions:
        init += [f"part_of({s.id}, q)", f"facet_of({s.id}, {s.facet})", f"open({s.id})"]
    init += [f"available({obj})" for obj, _ in problem.sources]
    lines = [
        "# A research problem written by plansmith.domains.research.problem_for.",
        f"# question ({q.kind}): {q.text}",
        *(f"# part {n} ({p.kind}): {p.text}" for n, p in enumerate(q.parts, 1)),
        *(
            f"# {s.id}{f' (part {s.part})' if s.part else ''}: {s.text}"
            for s in problem.subquestions
        ),
        *(f"# dropped: {d.subquestion} -- {d.reason}" for d in problem.decisions if not d.kept),
        _HEADER + header,
        f"problem: {problem.name}",
        "domain: research",
        "objects: {" + ", ".join(objects) + "}",
        "init:",
        *(f"  - {atom}" for atom in init),
        "tasks: [research(q)]",
    ]
    return "\n".join(lines) + "\n"


def problem_for(
    question: str,
    sources: Sequence[str],
    budget: Budget | None = None,
    *,
    extra: Iterable[str] = (),
) -> str:
    """The problem YAML for ``question`` over ``sources`` within ``budget``."""
    return problem_yaml(research_problem(question, sources, budget, extra=extra))


def read_research_header(text: str, file: str | None = None) -> ResearchProblem:
    """The :class:`ResearchProblem` kept in a problem file's ``# research:`` line."""
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith(_HEADER):
            try:
                return ResearchProblem.from_json(json.loads(line[len(_HEADER) :]))
            except (ValueError, KeyError, TypeError) as error:
                raise ProblemError(
                    f"the research header is malformed: {error}",
                    location=Location(file, number),
                    hint="write the problem again with problem_for (do not edit the header)",
                ) from None
    raise ProblemError(
        "the problem has no '# research:' header line",
        location=Location(file, 1),
        hint="write research problems with plansmith.domains.research.problem_for",
    )
