"""The binding of an ask action: no tool, but a question for a person.

An ask step is bound to the reserved server ``plansmith`` and its tool ``ask``; its
arguments hold the question (a template: ``${param}`` and output references are
rendered like a tool's arguments), the answer's schema and the answer the planner
assumed. The runner recognises such a step (``is_ask_step``) and asks instead of
calling. A binding file may give an ask action a question of its own (``arguments:
{question: ...}``, with output references); server and tool are then these two.
"""

from __future__ import annotations

import re

from plansmith.binding._model import Binding, Bindings
from plansmith.errors import BindingError, PlansmithError
from plansmith.model import (
    ActionSchema,
    Domain,
    JSONValue,
)

__all__ = [
    "ASK_SERVER",
    "ASK_TOOL",
    "ask_binding",
    "with_ask_bindings",
    "is_ask_step",
]

#: the reserved server and tool of an ask step
ASK_SERVER = "plansmith"
ASK_TOOL = "ask"
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_-]*)\}")


def is_ask_step(server: str, tool: str) -> bool:
    """Whether a bound step with this server and tool asks a person."""
    return server == ASK_SERVER and tool == ASK_TOOL


def ask_binding(schema: ActionSchema, given: Binding | None) -> Binding:
    """The binding of ask action ``schema``: ``given``'s question (if it has one) or the
    domain's (``{param}`` becomes ``${param}``), the answer schema, the assumed answer."""
    ask = schema.ask
    assert ask is not None
    question: JSONValue = _PLACEHOLDER.sub(lambda m: "${" + m.group(1) + "}", ask.question)
    if given is not None:
        if not is_ask_step(given.server, given.tool):
            raise BindingError(
                f"binding {schema.name!r}: {schema.name} is an ask action, bound to"
                f" {given.server}/{given.tool}",
                location=given.where("server"),
                hint=f"an ask action is answered by a person: bind it to server"
                f" {ASK_SERVER!r}, tool {ASK_TOOL!r} (or leave it out of the bindings)",
            )
        if isinstance(given.arguments, dict) and "question" in given.arguments:
            question = given.arguments["question"]
    arguments: dict[str, JSONValue] = {
        "question": question,
        "answer": ask.answer.to_json(),
        "assumed": ask.assumed,
    }
    if given is not None:
        return Binding(
            schema.name,
            ASK_SERVER,
            ASK_TOOL,
            arguments,
            outputs=(("answer", "$.answer"),),
            policy=given.policy,
            loc=given.loc,
            locations=given.locations,
        )
    return Binding(schema.name, ASK_SERVER, ASK_TOOL, arguments, outputs=(("answer", "$.answer"),))


def with_ask_bindings(bindings: Bindings, domain: Domain) -> tuple[Bindings, list[PlansmithError]]:
    """``bindings`` with each ask action of ``domain`` bound as ``ask_binding`` makes it
    (a binding the file gives it supplies its question), and the problems found."""
    asks = [a for a in domain.actions if a.ask is not None]
    if not asks:
        return bindings, []
    problems: list[PlansmithError] = []
    made: dict[str, Binding] = {}
    for schema in asks:
        try:
            made[schema.name] = ask_binding(schema, bindings.get(schema.name))
        except BindingError as error:
            problems.append(error)
    kept = tuple(made.pop(b.action, b) for b in bindings.bindings)
    return Bindings((*kept, *made.values()), bindings.source), problems
