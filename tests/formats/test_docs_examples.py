"""Every example of the format pages (docs/formats.md, bindings.md, events.md) works as
written: each ```yaml, ```json and ```jsonl block is read by plansmith's own reader for
its kind and validated against its JSON Schema in schemas/. A block of no known kind
fails: an example nobody checks could go stale."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
import yaml

from _schemas import ROOT, doc_examples, errors
from plansmith.binding import parse_bindings
from plansmith.execution import RunView, event_from_dict
from plansmith.execution._invoker import ToolResult
from plansmith.formats import parse_domain, parse_plan_json, parse_problem
from plansmith.planning import validate
from plansmith.servers import parse_servers

EXAMPLES = doc_examples()
DOC_DOMAIN = parse_domain((ROOT / "examples" / "doc-pipeline" / "domain.yaml").read_text("utf-8"))
#: what the servers examples' ${env:NAME} read
ENV = {"HOME": "/home/u", "TOKEN": "t"}


def _check_yaml(where: str, text: str) -> str:
    data = yaml.safe_load(text)
    if "domain" in data and "actions" in data:
        parse_domain(text, file=where)
        assert errors("domain", data) == []
        return "domain"
    if "problem" in data:
        parse_problem(text, DOC_DOMAIN, file=where)
        assert errors("problem", data) == []
        return "problem"
    if "bindings" in data:
        parse_bindings(text, source=where)
        assert errors("bindings", data) == []
        return "bindings"
    raise AssertionError(f"{where}: a YAML example of no known kind")


def _check_json(where: str, text: str) -> str:
    data: Any = json.loads(text)
    if "mcpServers" in data or "servers" in data:
        parse_servers(text, source=where, env=ENV)
        assert errors("servers", data) == []
        return "servers"
    if data.get("format") == "plansmith.plan":
        plan = parse_plan_json(text, where)  # its hash and cost match its steps
        assert errors("plan", data) == []
        problem_file = ROOT / "examples" / "doc-pipeline" / "problem.yaml"
        problem = parse_problem(problem_file.read_text("utf-8"), DOC_DOMAIN)
        validate(plan, problem)  # it solves the problem above; the hashes are its files'
        return "plan"
    if {"run_id", "steps", "counts"} <= set(data):
        _check_run_view(data)
        return "run view"
    if set(data) == {"structured", "text", "json", "is_error"}:
        result = ToolResult(data["structured"], data["text"], data["is_error"])
        assert result.document() == data  # `json` is what the text parses to
        return "result document"
    raise AssertionError(f"{where}: a JSON example of no known kind")


def _check_run_view(data: dict[str, Any]) -> None:
    """The run view of an events example of the page: its events, after a ``RunCreated``
    and a ``PlanReady`` of the steps the view lists, fold into the view as shown."""
    run_id = data["run_id"]
    [events] = [
        [json.loads(line) for line in text.splitlines()]
        for _, language, text in EXAMPLES
        if language == "jsonl" and json.loads(text.splitlines()[0])["run_id"] == run_id
    ]
    keys = ("id", "action", "args", "tier", "server", "tool", "arguments", "after")
    bound = {
        "plan_hash": data["plan_hash"],
        "steps": [{k: s[k] for k in keys} for s in data["steps"]],
    }
    first = events[0]["seq"]
    made = [
        {"type": "RunCreated", "run_id": run_id, "seq": first - 2, "time": data["created"],
         "inputs": data["inputs"]},
        {"type": "PlanReady", "run_id": run_id, "seq": first - 1, "time": data["created"],
         "plan_hash": data["plan_hash"], "plan": {}, "bound": bound},
    ]  # fmt: skip
    view = RunView.fold(event_from_dict(e) for e in [*made, *events])
    assert view.to_dict() == data


def _check_jsonl(where: str, text: str) -> str:
    seqs = []
    for line in text.splitlines():
        data = json.loads(line)
        # every field the page shows is one plansmith writes, with its JSON type
        assert event_from_dict(data).to_dict() == data, line
        seqs.append(data["seq"])
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # one more per event
    return "events"


@pytest.mark.parametrize(("where", "language", "text"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_every_example_of_the_format_pages_is_read_and_valid(
    where: str, language: str, text: str
) -> None:
    check = {"yaml": _check_yaml, "json": _check_json, "jsonl": _check_jsonl}[language]
    check(where, text)


def test_the_pages_show_an_example_of_every_format() -> None:
    kinds = {
        {"yaml": _check_yaml, "json": _check_json, "jsonl": _check_jsonl}[language](where, text)
        for where, language, text in EXAMPLES
    }
    assert kinds == {
        "domain",
        "problem",
        "servers",
        "bindings",
        "plan",
        "result document",
        "events",
        "run view",
    }


def test_no_file_of_the_repository_points_at_a_folder_beside_it() -> None:
    # a user's clone has nothing beside it: no file but the changelog (history) may name
    # the team's folder next to the checkout
    needle = "/".join(("..", "shared"))
    for page in (ROOT / "docs").glob("*.md"):
        assert needle not in page.read_text("utf-8"), page.name
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:  # pragma: no cover - an unpacked source tree, not a clone
        pytest.skip("not a git checkout: the repository's files cannot be listed")
    named = []
    for name in listed.stdout.decode().split("\0"):
        path = ROOT / name
        if not name or name == "CHANGELOG.md" or path.is_symlink() or not path.is_file():
            continue
        if needle.encode() in path.read_bytes():
            named.append(name)
    assert named == []
