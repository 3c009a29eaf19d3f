"""The JSON Schemas in schemas/ for the schema tests of each format: the schema, a
document's errors against it, and the examples of docs/ (formats.md, bindings.md,
events.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema

ROOT = Path(__file__).resolve().parents[1]
FORMATS_MD = ROOT / "docs" / "formats.md"
#: the pages whose ```yaml, ```json and ```jsonl blocks are examples of the formats
EXAMPLE_PAGES = tuple(ROOT / "docs" / page for page in ("formats.md", "bindings.md", "events.md"))
EXAMPLE_LANGUAGES = ("yaml", "json", "jsonl")


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
    """The first ``language`` code block after ``## heading`` in docs/formats.md."""
    section = FORMATS_MD.read_text("utf-8").split(f"\n## {heading}", 1)[1]
    return str(re.findall(rf"```{language}\n(.*?)```", section, re.S)[0])


def doc_examples() -> list[tuple[str, str, str]]:
    """Every example block of the docs' format pages: ``(page:line, language, text)``."""
    found = []
    for page in EXAMPLE_PAGES:
        text = page.read_text("utf-8")
        for m in re.finditer(r"^```(\w+)\n(.*?)^```", text, re.S | re.M):
            if m.group(1) in EXAMPLE_LANGUAGES:
                line = text.count("\n", 0, m.start()) + 1
                found.append((f"{page.name}:{line}", m.group(1), m.group(2)))
    return found
