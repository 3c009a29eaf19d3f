"""The JSON Schemas in schemas/ for the schema tests of each format: the schema, a
document's errors against it, and the formats.md example of a section."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[1]
FORMATS_MD = ROOT.parent / "shared" / "docs" / "formats.md"


def schema(kind: str) -> dict[str, Any]:
    """``schemas/KIND.schema.json``, checked as Draft 2020-12."""
    loaded: dict[str, Any] = json.loads((ROOT / "schemas" / f"{kind}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(loaded)
    return loaded


def errors(kind: str, document: Any) -> list[str]:
    """What ``schemas/KIND.schema.json`` finds wrong with ``document``."""
    validator = jsonschema.Draft202012Validator(schema(kind))
    return [error.message for error in validator.iter_errors(document)]


def formats_md_example(heading: str, language: str) -> str:
    """The first ``language`` code block after ``## heading`` in formats.md (skips the
    test when shared/ is not beside the checkout)."""
    if not FORMATS_MD.exists():  # pragma: no cover - shared/ lies beside the checkout
        pytest.skip("shared/docs/formats.md is not beside the checkout")
    section = FORMATS_MD.read_text("utf-8").split(f"## {heading}", 1)[1]
    return str(re.findall(rf"```{language}\n(.*?)```", section, re.S)[0])
