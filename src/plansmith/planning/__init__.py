"""The pure, synchronous planner: grounding, search, heuristics, HTN, validation, explanation."""

__all__: list[str] = []
