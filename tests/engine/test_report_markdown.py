"""The run report's Markdown, from the report JSON ``build_report`` gives."""

from __future__ import annotations

from plansmith.engine import build_report, report_markdown
from plansmith.execution import MemoryRunLog


def test_a_step_whose_arguments_are_not_text_is_written_with_them() -> None:
    # GTPyhop's Omega HDQ plan, mapped to a Flex, has steps with boolean and number
    # arguments (a dry run, a volume): the report of such a run failed with TypeError
    report = build_report("r-1", [], MemoryRunLog(), {})
    report["steps"] = [
        {
            "step": "s1",
            "action": "incubate",
            "args": ["plate", 55, True],
            "tool": "incubate",
            "server": "modules",
            "duration_ms": 12,
            "outcome": "succeeded",
            "attempts": 1,
        }
    ]
    text = report_markdown(report)
    assert "| s1 | incubate(plate, 55, True) | incubate | modules | 12 " in text
