"""The partial order of an HTN plan, read off the task networks that produced it.

Items of an ordered network are ordered: every last step of an item comes
before every first step of the next non-empty item. The branches of a parallel
block are not ordered with each other, only with what comes before and after
the block. One exception keeps every ordering of the steps executable: two
steps of different branches that interfere (one changes an atom the other
needs, or one adds an atom the other deletes) keep the order in which the
search applied them. Steps that only add, or only delete, the same atom do not
interfere. The edges are reduced transitively (``_dag.transitive_reduction``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plansmith.model import Atom, DecompositionNode, GroundAction
from plansmith.planning._dag import transitive_reduction
from plansmith.planning.htn._decompose import ActionEvent, Decomposition, MethodEvent, Shape

__all__ = ["Ordering", "order"]


@dataclass(frozen=True, slots=True)
class Ordering:
    """The steps in search order, each with the indices it must follow, and the tree."""

    actions: tuple[GroundAction, ...]
    after: tuple[tuple[int, ...], ...]
    tree: tuple[DecompositionNode, ...]


def order(decomposition: Decomposition) -> Ordering:
    methods: dict[int, MethodEvent] = {}
    steps: dict[int, int] = {}
    actions: list[GroundAction] = []
    for event in decomposition.events:
        if isinstance(event, ActionEvent):
            steps[event.node] = len(actions)
            actions.append(event.action)
        else:
            methods[event.node] = event
    preds: list[set[int]] = [set() for _ in actions]
    _Edges(methods, steps, actions, preds).frontier(decomposition.roots)
    after = tuple(transitive_reduction(preds))
    tree = _Tree(methods, steps, actions).children(decomposition.roots)
    return Ordering(tuple(actions), after, tree)


@dataclass(frozen=True, slots=True)
class _Edges:
    methods: dict[int, MethodEvent]
    steps: dict[int, int]
    actions: list[GroundAction]
    preds: list[set[int]]

    def frontier(self, shape: Shape) -> tuple[list[int], list[int]]:
        """The first and the last steps of ``shape``, adding the edges inside it."""
        kind, body = shape
        if kind == "node":
            if body in self.steps:
                return [self.steps[body]], [self.steps[body]]
            return self.frontier(self.methods[body].shape)
        if kind == "parallel":
            firsts: list[int] = []
            lasts: list[int] = []
            for branch in body:
                first, last = self.frontier(branch)
                firsts += first
                lasts += last
            self._interference([self._steps_in(b) for b in body])
            return firsts, lasts
        head: list[int] = []
        tail: list[int] = []
        for item in body:
            first, last = self.frontier(item)
            if not first:
                continue
            for j in first:
                self.preds[j].update(tail)
            head = head or first
            tail = last
        return head, tail

    def _steps_in(self, shape: Shape) -> list[int]:
        kind, body = shape
        if kind == "node":
            if body in self.steps:
                return [self.steps[body]]
            return self._steps_in(self.methods[body].shape)
        return [s for item in body for s in self._steps_in(item)]

    def _interference(self, branches: Sequence[list[int]]) -> None:
        """Order interfering steps of different branches as they were applied."""
        readers: dict[Atom, list[int]] = {}
        writers: dict[Atom, list[int]] = {}
        for branch in branches:
            for j in branch:
                b = self.actions[j]
                candidates: set[int] = set()
                for atom in b.add | b.delete:
                    candidates.update(readers.get(atom, ()))
                    candidates.update(writers.get(atom, ()))
                for atom in b.pre_pos | b.pre_neg:
                    candidates.update(writers.get(atom, ()))
                for i in candidates:
                    if _interfere(self.actions[i], b):
                        low, high = min(i, j), max(i, j)
                        self.preds[high].add(low)
            for j in branch:
                b = self.actions[j]
                for atom in b.pre_pos | b.pre_neg:
                    readers.setdefault(atom, []).append(j)
                for atom in b.add | b.delete:
                    writers.setdefault(atom, []).append(j)


def _interfere(a: GroundAction, b: GroundAction) -> bool:
    a_writes, b_writes = a.add | a.delete, b.add | b.delete
    return bool(
        a_writes & (b.pre_pos | b.pre_neg)
        or b_writes & (a.pre_pos | a.pre_neg)
        or a.add & b.delete
        or a.delete & b.add
    )


@dataclass(frozen=True, slots=True)
class _Tree:
    methods: dict[int, MethodEvent]
    steps: dict[int, int]
    actions: list[GroundAction]

    def children(self, shape: Shape) -> tuple[DecompositionNode, ...]:
        kind, body = shape
        if kind == "node":
            return (self.node(body),)
        return tuple(n for item in body for n in self.children(item))

    def node(self, node: int) -> DecompositionNode:
        if node in self.steps:
            index = self.steps[node]
            action = self.actions[index]
            return DecompositionNode(task=action.name, args=action.args, step=f"s{index + 1}")
        event = self.methods[node]
        return DecompositionNode(
            task=event.call.name,
            args=event.call.args,
            method=event.method,
            children=self.children(event.shape),
        )
