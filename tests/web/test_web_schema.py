"""Fuzzing every operation of the OpenAPI schema (schemathesis): no answer is a 5xx.

Hypothesis drives each operation's strategy directly (schemathesis' pytest fixture
loader does not run under pytest 9); examples are few, so this stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import schemathesis
from _web_helpers import settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error

from plansmith.domains.research import PLANTED_DIR
from plansmith.web import create_app

EXAMPLES = 12


def test_no_operation_answers_with_a_server_error(tmp_path: Path) -> None:
    # research over the small planted notes: its runs (the fuzz's questions) index them in
    # a moment, where the Python docs' index would take minutes on a loaded machine
    notes = f"notes={PLANTED_DIR / 'notes'}"
    app = create_app(settings(tmp_path, research_sources=(notes,)))
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, headers={"Host": "127.0.0.1"})
    tried: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]
        tried.append(operation.label)

        @given(case=operation.as_strategy())
        @hypothesis_settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case: schemathesis.Case[Any]) -> None:
            case.call_and_validate(base_url="http://127.0.0.1", checks=[not_a_server_error])

        check()
    anyio.run(app.state.controller.aclose)
    assert len(tried) == 16  # every operation, the answers to ask steps included
