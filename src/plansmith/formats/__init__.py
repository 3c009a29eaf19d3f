"""Text to model and back: YAML/JSON domains and problems, PDDL, plan JSON, renderings."""

__all__: list[str] = []
