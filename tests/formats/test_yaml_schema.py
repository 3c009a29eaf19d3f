"""The JSON Schemas in schemas/: valid, they accept every example, and they catch bad files."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from plansmith.errors import InputError
from plansmith.formats import parse_domain, parse_problem

ROOT = Path(__file__).resolve().parents[2]
FORMATS_MD = ROOT / "docs" / "formats.md"
SCHEMAS = {
    kind: json.loads((ROOT / "schemas" / f"{kind}.schema.json").read_text("utf-8"))
    for kind in ("domain", "problem")
}
DOC_DOMAIN = parse_domain((ROOT / "examples" / "doc-pipeline" / "domain.yaml").read_text("utf-8"))


def _errors(kind: str, document: Any) -> list[str]:
    validator = jsonschema.Draft202012Validator(SCHEMAS[kind])
    return [error.message for error in validator.iter_errors(document)]


def _load(path: Path) -> Any:
    text = path.read_text("utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def _example_files(kind: str) -> list[Path]:
    files = sorted((ROOT / "examples").glob(f"*/{kind}*.*"))
    return [f for f in files if f.suffix in (".yaml", ".yml", ".json")]


@pytest.mark.parametrize("kind", ["domain", "problem"])
def test_schema_is_valid_draft_2020_12_with_descriptions(kind: str) -> None:
    schema = SCHEMAS[kind]
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert all("description" in field for field in schema["properties"].values())


def test_examples_exist_for_both_kinds_and_both_syntaxes() -> None:
    suffixes = {f.suffix for f in _example_files("domain")} | {
        f.suffix for f in _example_files("problem")
    }
    assert {".yaml", ".json"} <= suffixes
    assert len(_example_files("domain")) >= 3


@pytest.mark.parametrize(
    "path", _example_files("domain"), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_every_example_domain_validates(path: Path) -> None:
    assert _errors("domain", _load(path)) == []


@pytest.mark.parametrize(
    "path", _example_files("problem"), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_every_example_problem_validates(path: Path) -> None:
    assert _errors("problem", _load(path)) == []


def test_every_formats_md_example_validates() -> None:
    domain, problem = re.findall(r"```yaml\n(.*?)```", FORMATS_MD.read_text("utf-8"), re.S)[:2]
    assert _errors("domain", yaml.safe_load(domain)) == []
    assert _errors("problem", yaml.safe_load(problem)) == []
    htn = problem.replace("goal: [", "# goal: [").replace("# tasks:", "tasks:")
    assert _errors("problem", yaml.safe_load(htn)) == []


BAD_DOMAINS = {
    "no name": "types: {a: object}\n",
    "unknown section": "domain: d\nacts: {}\n",
    "unknown tier": "domain: d\nactions: {a: {tier: admin}}\n",
    "negative cost": "domain: d\nactions: {a: {cost: -1}}\n",
    "cost as text": "domain: d\nactions: {a: {cost: one}}\n",
    "unknown action key": "domain: d\nactions: {a: {efect: []}}\n",
    "both networks": "domain: d\ntasks: {t: {methods: [{subtasks: [], parallel: []}]}}\n",
    "root declared": "domain: d\ntypes: {object: thing}\n",
    "goal without literals": "domain: d\ngoals: {g: {description: x}}\n",
    "literal not text": "domain: d\nactions: {a: {effect: [[p]]}}\n",
    "bad name": "domain: d\npredicates: {'a b': []}\n",
}
BAD_PROBLEMS = {
    "no goal nor tasks": "problem: p\ndomain: doc-pipeline\ninit: []\n",
    "no domain": "problem: p\ngoal: []\n",
    "unknown key": "problem: p\ndomain: doc-pipeline\ngoal: []\nstate: []\n",
    "objects as a list": "problem: p\ndomain: doc-pipeline\nobjects: [a]\ngoal: []\n",
}


@pytest.mark.parametrize("text", BAD_DOMAINS.values(), ids=BAD_DOMAINS.keys())
def test_bad_domains_fail_the_schema_and_the_reader(text: str) -> None:
    assert _errors("domain", yaml.safe_load(text)) != []
    with pytest.raises(InputError):
        parse_domain(text)


@pytest.mark.parametrize("text", BAD_PROBLEMS.values(), ids=BAD_PROBLEMS.keys())
def test_bad_problems_fail_the_schema_and_the_reader(text: str) -> None:
    assert _errors("problem", yaml.safe_load(text)) != []
    with pytest.raises(InputError):
        parse_problem(text, DOC_DOMAIN)
