"""Text to model and back: YAML/JSON domains and problems, PDDL, plan JSON, renderings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plansmith._lazy import lazy_exports

if TYPE_CHECKING:
    from plansmith.formats._gtpyhop import (
        action_domain,
        load_gtpyhop_package,
        load_gtpyhop_problems,
        py_domain_of,
    )
    from plansmith.formats._load import (
        SYNTAXES,
        Syntax,
        load_domain,
        load_problem,
        parse_domain,
        parse_problem,
        syntax_of,
    )
    from plansmith.formats._plan_json import parse_plan_json, plan_to_json
    from plansmith.formats._render import render_dot, render_mermaid, render_text

__all__ = [
    # domains and problems (YAML, JSON, PDDL)
    "Syntax",
    "SYNTAXES",
    "syntax_of",
    "load_domain",
    "load_problem",
    "parse_domain",
    "parse_problem",
    # GTPyhop domain packages (domain.py + problems.py)
    "load_gtpyhop_package",
    "load_gtpyhop_problems",
    "py_domain_of",
    "action_domain",
    # plans
    "plan_to_json",
    "parse_plan_json",
    "render_text",
    "render_mermaid",
    "render_dot",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "plansmith.formats._gtpyhop": (
            "load_gtpyhop_package",
            "load_gtpyhop_problems",
            "py_domain_of",
            "action_domain",
        ),
        "plansmith.formats._load": (
            "SYNTAXES",
            "Syntax",
            "load_domain",
            "load_problem",
            "parse_domain",
            "parse_problem",
            "syntax_of",
        ),
        "plansmith.formats._plan_json": (
            "parse_plan_json",
            "plan_to_json",
        ),
        "plansmith.formats._render": (
            "render_dot",
            "render_mermaid",
            "render_text",
        ),
    },
)
