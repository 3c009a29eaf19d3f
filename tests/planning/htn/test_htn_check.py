"""Malformed method definitions and task lists: typed errors with their location."""

from __future__ import annotations

import dataclasses

import pytest
from _htn_helpers import DOC_PIPELINE, doc_pipeline_htn

from plansmith.errors import DomainError, Location, ProblemError
from plansmith.formats import parse_domain, parse_problem
from plansmith.model import Method, Ordered, TaskCall, TaskSchema, TypedName
from plansmith.planning.htn import plan_htn

HERE = Location("domain.yaml", 7, 3)


def _with_method(method: Method, task: str = "publish"):  # type: ignore[no-untyped-def]
    problem = doc_pipeline_htn()
    domain = problem.domain
    tasks = tuple(
        dataclasses.replace(t, methods=(method, *t.methods)) if t.name == task else t
        for t in domain.tasks
    )
    return dataclasses.replace(problem, domain=dataclasses.replace(domain, tasks=tasks))


def test_a_task_without_methods_is_a_domain_error_at_the_task() -> None:
    text = (DOC_PIPELINE / "domain.yaml").read_text()
    start = text.index("      - name: both")
    end = text.index("\n", text.index("parallel:", start))
    domain = parse_domain(text[:start] + "      []" + text[end:], file="d.yaml")
    problem = parse_problem(
        "problem: p\ndomain: doc-pipeline\nobjects: {n: document}\ninit: []\ntasks: [publish(n)]\n",
        domain,
        file="p.yaml",
    )
    with pytest.raises(DomainError, match="publish_all has no methods") as caught:
        plan_htn(problem)
    assert caught.value.location is not None
    assert caught.value.location.file == "d.yaml"
    assert caught.value.location.line == text[: text.index("  publish_all:")].count("\n") + 1
    assert caught.value.exit_code == 2


def test_a_call_to_an_unknown_task_is_reported_where_it_is_written() -> None:
    method = Method("m", network=Ordered((TaskCall("publsh", ("d",), HERE),)))
    with pytest.raises(DomainError, match="calls publsh, which is neither") as caught:
        plan_htn(_with_method(method))
    assert caught.value.location == HERE
    assert caught.value.hint


def test_a_call_with_the_wrong_number_of_arguments_is_a_domain_error() -> None:
    method = Method("m", network=Ordered((TaskCall("index", ("d", "d"), HERE),)))
    with pytest.raises(DomainError, match="with 2 argument") as caught:
        plan_htn(_with_method(method))
    assert caught.value.location == HERE
    assert caught.value.hint == "write index(d)"


def test_a_method_term_that_is_no_variable_or_constant_is_a_domain_error() -> None:
    method = Method("m", network=Ordered((TaskCall("index", ("q3",), HERE),)))
    with pytest.raises(DomainError, match="uses 'q3'") as caught:
        plan_htn(_with_method(method))
    assert caught.value.location == HERE


def test_a_method_parameter_that_shadows_a_task_parameter_is_a_domain_error() -> None:
    method = Method("m", parameters=(TypedName("d", "document"),), loc=HERE)
    with pytest.raises(DomainError, match="declares 'd' twice") as caught:
        plan_htn(_with_method(method))
    assert caught.value.location == HERE


def test_an_unknown_task_in_the_problem_is_a_problem_error_at_the_call() -> None:
    problem = dataclasses.replace(doc_pipeline_htn(), tasks=(TaskCall("publsh", ("q3",), HERE),))
    with pytest.raises(ProblemError, match="publsh") as caught:
        plan_htn(problem)
    assert caught.value.location == HERE


def test_a_task_argument_of_the_wrong_type_is_a_problem_error() -> None:
    domain = doc_pipeline_htn().domain
    extra = TaskSchema("report_only", (TypedName("r", "report"),), (Method("m"),))
    domain = dataclasses.replace(domain, tasks=(*domain.tasks, extra))
    problem = dataclasses.replace(
        doc_pipeline_htn(), domain=domain, tasks=(TaskCall("report_only", ("notes",), HERE),)
    )
    with pytest.raises(ProblemError, match="'notes' is a document") as caught:
        plan_htn(problem)
    assert caught.value.location == HERE


def test_a_task_argument_that_is_not_an_object_is_a_problem_error() -> None:
    problem = dataclasses.replace(doc_pipeline_htn(), tasks=(TaskCall("publish", ("q4",), HERE),))
    with pytest.raises(ProblemError, match="'q4', which is not an object"):
        plan_htn(problem)


def test_the_yaml_reader_locates_a_misspelt_subtask() -> None:
    text = (DOC_PIPELINE / "domain.yaml").read_text().replace("[index(d)]", "[indx(d)]")
    with pytest.raises(DomainError) as caught:
        parse_domain(text, file="d.yaml")
    assert caught.value.location is not None
    assert caught.value.location.line is not None
