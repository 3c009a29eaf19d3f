# The compiled build's C extension (_native.c): hFF (heuristics/_ff_native.py feeds it) and
# successor generation (_task.py, TaskSpace).
class Hff:
    def __init__(
        self,
        *,
        n_facts: int,
        goals: list[int],
        eff_fact: list[int],
        eff_op: list[int],
        free_cost: list[int],
        free_start: list[int],
        free_end: list[int],
        direct_start: list[int],
        direct_cost: list[int],
        direct_effect_start: list[int],
        direct_effect_end: list[int],
        counted_start: list[int],
        counted: list[int],
        group_cost: list[int],
        group_effect_start: list[int],
        group_effect_end: list[int],
        group_size: list[int],
        pre_start: list[int],
        pre: list[int],
        op_cost: list[int],
        neg_start: list[int],
        neg: list[int],
    ) -> None: ...
    def evaluate(self, state: int, /) -> tuple[float, set[int]]: ...

class Successors:
    def __init__(
        self,
        *,
        n_facts: int,
        pre_start: list[int],
        pre: list[int],
        neg_start: list[int],
        neg: list[int],
        add_start: list[int],
        add: list[int],
        delete_start: list[int],
        delete: list[int],
        always: list[int],
        key_start: list[int],
        key_ops: list[int],
        costs: list[int | float],
    ) -> None: ...
    def successors(self, state: int, /) -> list[tuple[int, int, int | float]]: ...
