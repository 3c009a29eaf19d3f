"""Natural language to a goal with a language model: the prompt, and reading the answer.

The model sees the domain (predicates, objects, named goals, tasks) and the request,
and must answer one JSON object: ``{"goal": ["pred(obj)", ...]}`` or
``{"tasks": ["task(obj)", ...]}``, or ``{"goal": [], "reason": "..."}`` when the
domain cannot express the request (another job, an object it does not have): then
nothing is planned, and the reason is the translation's (``make_plan`` answers
``needs_choice``, as the offline matcher does for a request outside the domain). A
goal is then validated like user input by the service; a second (last) call is made
only to repair an answer that failed that validation (or could not be read), so a
plan of any length costs at most ``MAX_LLM_CALLS`` calls.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from plansmith.errors import InputError
from plansmith.mcp._types import DomainInfo

__all__ = ["MAX_LLM_CALLS", "LlmGoal", "translation_prompt", "repair_prompt", "read_answer"]

MAX_LLM_CALLS = 2
SYSTEM_PROMPT = (
    "You translate a user's request into a planning goal. Answer with one JSON object "
    'and nothing else: {"goal": ["predicate(object, ...)", ...]} for a state to reach, '
    'or {"tasks": ["task(object, ...)", ...]} for tasks to do. Use only the predicates, '
    "tasks and objects listed. If they cannot express the request (it asks for another "
    'job, or names an object not listed), answer {"goal": [], "reason": "why"}.'
)


@dataclass(frozen=True, slots=True)
class LlmGoal:
    """A model's answer: a goal or tasks, or neither and the ``reason`` (``none``)."""

    goal: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    reason: str = ""

    @property
    def none(self) -> bool:
        """The model answered that the domain has no goal for the request."""
        return not self.goal and not self.tasks


def translation_prompt(info: DomainInfo, request: str) -> str:
    goals = "\n".join(
        f"- {g.name}({', '.join(g.parameters)}): {g.description} -> {', '.join(g.goal)}"
        for g in info.goals
    )
    return (
        f"Domain {info.domain}.\n"
        f"Predicates: {', '.join(info.predicates) or '(none)'}\n"
        f"Tasks: {', '.join(info.tasks) or '(none)'}\n"
        f"Objects: {', '.join(info.objects) or '(none)'}\n"
        f"Named goals:\n{goals or '(none)'}\n"
        f"Request: {request}\n"
        "Answer with the JSON object only."
    )


def repair_prompt(info: DomainInfo, request: str, answer: str, error: str) -> str:
    return (
        f"{translation_prompt(info, request)}\n"
        f"Your previous answer was: {answer}\nIt was refused: {error}\n"
        "Answer again with a corrected JSON object only."
    )


def _strings(value: object, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(
            f"the model's {key!r} must be a list of strings",
            hint='answer {"goal": ["pred(obj)"]} or {"tasks": ["task(obj)"]}',
        )
    return tuple(value)


def read_answer(text: str) -> LlmGoal:
    """The goal or tasks in a model's answer (the first JSON object in the text), or
    its reason for neither."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    try:
        data = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        raise InputError(
            "the model did not answer with a JSON object",
            hint='expected {"goal": [...]} or {"tasks": [...]}; try a structured goal instead',
        )
    goal = _strings(data.get("goal", []), "goal")
    tasks = _strings(data.get("tasks", []), "tasks")
    reason = data.get("reason")
    if not goal and not tasks and isinstance(reason, str) and reason.strip():
        return LlmGoal(reason=" ".join(reason.split()))  # no goal, and why
    if not goal and not tasks:
        raise InputError(
            "the model's answer has neither a goal nor tasks",
            hint="rephrase the request, or pass goal=[...] yourself",
        )
    return LlmGoal(goal, tasks)
