"""HTN tasks of a YAML/JSON domain: tasks, their methods and their task networks.

A method's network is ``subtasks`` (an ordered list) or ``parallel`` (branches
that may run at the same time, each an ordered list, or one call). An entry of
an ordered list may itself be ``{parallel: [...]}``. Tasks are read in two
passes, so that a method may call a task declared after it.
"""

from __future__ import annotations

from dataclasses import dataclass

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from plansmith.formats._yaml_items import Located, entries, items
from plansmith.formats._yaml_node import (
    Fields,
    Source,
    fields,
    mapping,
    name,
    sequence,
    value_of,
)
from plansmith.formats._yaml_scope import Scope, Vocabulary, condition, task_call, typed_names
from plansmith.model import Method, Ordered, Parallel, TaskCall, TaskSchema, TypedName

__all__ = ["read_tasks"]

_TASK_KEYS = ("parameters", "methods")
_METHOD_KEYS = ("name", "precondition", "subtasks", "parallel", "parameters")
_MAX_DEPTH = 64


def _constants(vocab: Vocabulary) -> dict[str, str]:
    return dict.fromkeys(vocab.constants, "a constant")


def read_tasks(src: Source, vocab: Vocabulary, node: Node | None) -> tuple[TaskSchema, ...]:
    """The ``tasks:`` section; registers every task in ``vocab.callees`` first."""
    heads: list[tuple[ScalarNode, str, tuple[TypedName, ...], Fields]] = []
    for key, body in mapping(src, node, "tasks"):
        task = name(src, key, "a task name")
        if task in vocab.callees:
            raise src.fail(
                key,
                f"task {task!r} has the name of an action",
                hint="rename the task or the action: a name must mean one thing",
            )
        table = fields(src, body, f"task {task}", _TASK_KEYS)
        params = typed_names(
            src,
            vocab.types,
            value_of(table, "parameters"),
            f"the parameters of task {task}",
            _constants(vocab),
        )
        vocab.callees[task] = ("task", params)
        heads.append((key, task, params, table))
    out: list[TaskSchema] = []
    for key, task, params, table in heads:
        methods: list[Method] = []
        seen: dict[str, Node] = {}
        for index, method_node in enumerate(
            sequence(src, value_of(table, "methods"), f"the methods of task {task}"), 1
        ):
            method = _method(src, vocab, task, params, index=index, node=method_node)
            if method.name in seen:
                raise src.fail(
                    method_node,
                    f"task {task} has two methods named {method.name!r}",
                    hint="give each method its own name",
                )
            seen[method.name] = method_node
            methods.append(method)
        out.append(TaskSchema(task, params, tuple(methods), src.loc(key)))
    return tuple(out)


def _method(
    src: Source,
    vocab: Vocabulary,
    task: str,
    task_params: tuple[TypedName, ...],
    *,
    index: int,
    node: Node,
) -> Method:
    table = fields(src, node, f"method {index} of task {task}", _METHOD_KEYS)
    method_node = value_of(table, "name")
    method = f"{task}_{index}" if method_node is None else name(src, method_node, "a method name")
    what = f"method {method} of task {task}"
    taken = _constants(vocab) | {p.name: f"a parameter of task {task}" for p in task_params}
    extra = typed_names(
        src, vocab.types, value_of(table, "parameters"), f"the parameters of {what}", taken
    )
    terms = {c.name: c.type for c in vocab.constants.values()}
    terms |= {p.name: p.type for p in (*task_params, *extra)}
    scope = Scope(terms)
    precondition = tuple(
        condition(src, vocab, scope, item, f"the precondition of {what}")
        for item in items(src, value_of(table, "precondition"), f"the precondition of {what}")
    )
    if "subtasks" in table and "parallel" in table:
        raise src.fail(
            table["parallel"][0],
            f"{what} has both 'subtasks' and 'parallel'",
            hint="use one: write {parallel: [...]} as an entry of subtasks to combine them",
        )
    network = Ordered()
    reader = _Network(src, vocab, scope, what)
    if "parallel" in table:
        block = reader.parallel(table["parallel"][1], 0)
        network = Ordered((block,)) if block.branches else Ordered()
    elif "subtasks" in table:
        network = reader.ordered(table["subtasks"][1], 0)
    return Method(method, precondition, network, extra, src.loc(node))


@dataclass(frozen=True, slots=True)
class _Network:
    """Reads the task network of one method."""

    src: Source
    vocab: Vocabulary
    scope: Scope
    what: str

    def ordered(self, node: Node, depth: int) -> Ordered:
        self._guard(node, depth)
        found = entries(self.src, node, f"the subtasks of {self.what}")
        return Ordered(tuple(self.entry(e, depth) for e in found))

    def parallel(self, node: Node, depth: int) -> Parallel:
        self._guard(node, depth)
        branches: list[Ordered] = []
        for branch in entries(self.src, node, f"the parallel branches of {self.what}"):
            if isinstance(branch, SequenceNode):
                branches.append(self.ordered(branch, depth + 1))
            else:
                branches.append(Ordered((self.entry(branch, depth),)))
        return Parallel(tuple(branches))

    def entry(self, entry: Located | Node, depth: int) -> TaskCall | Parallel:
        where = f"the subtasks of {self.what}"
        if isinstance(entry, Located):
            return task_call(self.src, self.vocab, self.scope, entry, where)
        if isinstance(entry, MappingNode):
            block = fields(self.src, entry, f"a block in {where}", ("parallel",), ("parallel",))
            return self.parallel(block["parallel"][1], depth + 1)
        raise self.src.fail(
            entry,
            f"an entry of {where} must be a task call or {{parallel: [...]}}",
            hint="write a call as name(a, b); nest lists only inside parallel",
        )

    def _guard(self, node: Node, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise self.src.fail(node, f"the task network of {self.what} nests too deeply")
