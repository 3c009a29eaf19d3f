"""Every kind of mistake in a YAML/JSON domain or problem: its class, file:line:col and hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from plansmith.errors import DomainError, InputError, ParseError, ProblemError
from plansmith.formats import parse_domain, parse_problem
from plansmith.formats._yaml_node import Source, compose, mapping

FOLDER = Path(__file__).resolve().parents[2] / "examples" / "doc-pipeline"
DOMAIN = (FOLDER / "domain.yaml").read_text(encoding="utf-8")
PROBLEM = (FOLDER / "problem.yaml").read_text(encoding="utf-8")


def _edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


# (id, old, new, error class, "line:col", words in the message, words in the hint)
DOMAIN_CASES = [
    (
        "unknown predicate",
        "[exists(d), not",
        "[exist(d), not",
        DomainError,
        "13:20",
        "unknown predicate 'exist'",
        "did you mean 'exists'?",
    ),
    (
        "wrong arity",
        "[exists(d), not",
        "[exists(d, d), not",
        DomainError,
        "13:20",
        "takes 1 argument, got 2",
        "exists(document)",
    ),
    (
        "unknown parameter",
        "[exists(d), not",
        "[exists(e), not",
        DomainError,
        "13:27",
        "unknown parameter or constant 'e'",
        "parameters",
    ),
    (
        "unknown type of parameter",
        "parameters: {d: document}\n    precondition: [exists",
        "parameters: {d: documnt}\n    precondition: [exists",
        DomainError,
        "12:21",
        "unknown type 'documnt'",
        "did you mean 'document'?",
    ),
    (
        "unknown parent type",
        "report: document",
        "report: documnt",
        DomainError,
        "4:11",
        "unknown parent 'documnt'",
        "did you mean 'document'?",
    ),
    (
        "unknown predicate argument type",
        "exists: [document]",
        "exists: [docment]",
        DomainError,
        "6:12",
        "unknown type 'docment'",
        "did you mean 'document'?",
    ),
    (
        "equality effect",
        "effect: [summarised(d)]",
        "effect: [d == d]",
        DomainError,
        "14:14",
        "cannot hold an equality",
        "effects add or delete atoms",
    ),
    (
        "unknown subtask",
        "subtasks: [index(d)]",
        "subtasks: [indx(d)]",
        DomainError,
        "30:20",
        "names neither an action nor a task",
        "did you mean 'index'?",
    ),
    (
        "subtask arity",
        "subtasks: [index(d)]",
        "subtasks: [index()]",
        DomainError,
        "30:20",
        "action index takes 1 argument, got 0",
        "index(document)",
    ),
    (
        "both subtasks and parallel",
        "[[publish(a)], [publish(b)]]",
        "[[publish(a)], [publish(b)]]\n        subtasks: []",
        DomainError,
        "35:9",
        "has both 'subtasks' and 'parallel'",
        "{parallel: [...]}",
    ),
    (
        "unknown tier",
        "tier: read ",
        "tier: reed ",
        DomainError,
        "16:11",
        "unknown tier 'reed'",
        "did you mean 'read'?",
    ),
    (
        "negative cost",
        "cost: 1 ",
        "cost: -1 ",
        DomainError,
        "15:11",
        "cost of action summarise is negative",
        "0 or more",
    ),
    (
        "cost not a number",
        "cost: 1 ",
        "cost: one ",
        DomainError,
        "15:11",
        "must be a number",
        "2.5",
    ),
    (
        "unknown top-level key",
        "actions:",
        "acts:",
        DomainError,
        "10:1",
        "unknown key 'acts'",
        "did you mean 'actions'?",
    ),
    (
        "unknown action key",
        "    effect: [summarised(d)]",
        "    efect: [summarised(d)]",
        DomainError,
        "14:5",
        "unknown key 'efect' in action summarise",
        "did you mean 'effect'?",
    ),
    (
        "duplicate action",
        "  index:\n",
        "  summarise:\n",
        DomainError,
        "17:3",
        "duplicate key 'summarise'",
        "first given at line 11",
    ),
    (
        "duplicate method",
        "name: index_only",
        "name: summarise_then_index",
        DomainError,
        "28:9",
        "two methods named 'summarise_then_index'",
        "own name",
    ),
    (
        "task named like an action",
        "  publish_all:",
        "  index:",
        DomainError,
        "31:3",
        "has the name of an action",
        "rename",
    ),
    (
        "literal syntax",
        "[exists(d), not",
        "[exists(d(, not",
        ParseError,
        "13:28",
        "expected ',' or ')'",
        "pred(a, b)",
    ),
    ("yaml syntax", "types:  ", "types: [", ParseError, "", "invalid YAML", "indentation"),
    (
        "method parameter shadows",
        "      - name: both\n",
        "      - name: both\n        parameters: {a: document}\n",
        DomainError,
        "35:22",
        "already a parameter of task publish_all",
        "rename",
    ),
    (
        "goal without literals",
        '    description: "make',
        '    descr: "make',
        DomainError,
        "38:5",
        "unknown key 'descr' in goal indexed",
        "did you mean 'description'?",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "error", "where", "message", "hint"),
    [pytest.param(*case[1:], id=case[0]) for case in DOMAIN_CASES],
)
def test_domain_mistake_reports_class_file_line_and_hint(
    old: str, new: str, error: type[InputError], *, where: str, message: str, hint: str
) -> None:
    with pytest.raises(error) as caught:
        parse_domain(_edit(DOMAIN, old, new), file="domain.yaml")
    assert type(caught.value) is error
    assert str(caught.value.location).startswith(f"domain.yaml:{where}")
    assert message in caught.value.message
    assert caught.value.hint is not None
    assert hint in caught.value.hint


def test_type_clash_names_the_argument_and_both_types() -> None:
    text = _edit(DOMAIN, "  report: document\n", "  report: document\n  memo: object\n")
    text = _edit(
        text,
        "parameters: {d: document}\n    precondition: [exists",
        "parameters: {d: memo}\n    precondition: [exists",
    )
    with pytest.raises(DomainError) as caught:
        parse_domain(text, file="domain.yaml")
    assert str(caught.value.location) == "domain.yaml:14:27"
    assert "argument 1 of predicate exists must be of type 'document'" in caught.value.message
    assert "'d' is of type 'memo'" in caught.value.message


def test_type_cycle_is_an_error() -> None:
    with pytest.raises(DomainError, match="cycle: a -> b -> a") as caught:
        parse_domain("domain: x\ntypes:\n  a: b\n  b: a\n", file="d.yaml")
    assert str(caught.value.location) == "d.yaml:3:6"


def test_declaring_the_root_type_is_an_error() -> None:
    with pytest.raises(DomainError, match="root type") as caught:
        parse_domain("domain: x\ntypes: {object: thing}\n", file="d.yaml")
    assert str(caught.value.location) == "d.yaml:2:9"


def test_parameter_named_like_a_constant_is_an_error() -> None:
    text = "domain: x\nconstants: {c: object}\nactions:\n  go:\n    parameters: {c: object}\n"
    with pytest.raises(DomainError, match="already a constant") as caught:
        parse_domain(text, file="d.yaml")
    assert str(caught.value.location) == "d.yaml:5:18"


@pytest.mark.parametrize(
    ("text", "message", "where"),
    [
        ("", "the domain file is empty", "d.yaml:1"),
        ("- a\n- b\n", "must be a mapping", "d.yaml:1:1"),
        ("types: {}\n", "has no 'domain'", "d.yaml:1:1"),
        ("domain: [x]\n", "must be a name", "d.yaml:1:9"),
        ("domain: 'a b'\n", "not a valid name", "d.yaml:1:9"),
        ("domain: x\nactions: [a]\n", "must be a mapping", "d.yaml:2:10"),
        ("domain: x\npredicates: {p: object}\n", "must be a list", "d.yaml:2:17"),
        (
            "domain: x\npredicates: {p: []}\nactions: {a: {effect: p()}}\n",
            "must be a list",
            "d.yaml:3:23",
        ),
        (
            "domain: x\npredicates: {p: []}\nactions: {a: {effect: [[p()]]}}\n",
            "must be text",
            "d.yaml:3:24",
        ),
        ("domain: x\ngoals: {g: {description: x}}\n", "has no 'goal'", "d.yaml:2:12"),
        (
            "domain: x\ntasks: {t: {methods: [{subtasks: [[t()]]}]}}\n",
            "task call or {parallel",
            "d.yaml:2:35",
        ),
        (
            "domain: x\ntasks: {t: {methods: [{subtasks: [{para: []}]}]}}\n",
            "unknown key 'para'",
            "d.yaml:2:36",
        ),
        ("domain: x\nactions: {a: {cost: .inf}}\n", "must be a number", "d.yaml:2:21"),
        ("domain: x\nactions: {a: {cost: '3'}}\n", "must be a number", "d.yaml:2:21"),
        ("domain: x\nactions: {a: {tier: [read]}}\n", "must be text", "d.yaml:2:21"),
        ("domain: x\nactions: {a: {precondition: [z == z]}}\n", "unknown parameter", "d.yaml:2:30"),
        ("domain: x\ntypes: {[a]: object}\n", "a key of types must be a name", "d.yaml:2:9"),
    ],
)
def test_malformed_domain_shape_is_a_located_domain_error(
    text: str, message: str, where: str
) -> None:
    with pytest.raises(DomainError) as caught:
        parse_domain(text, file="d.yaml")
    assert message in caught.value.message
    assert str(caught.value.location) == where


def test_yaml_syntax_error_gives_line_and_column_of_the_yaml_mark() -> None:
    with pytest.raises(ParseError) as caught:
        parse_domain("domain: x\nactions:\n  a: {effect: [p()}\n", file="d.yaml")
    assert str(caught.value.location) == "d.yaml:3:19"
    assert caught.value.message.startswith("invalid YAML")


def test_json_syntax_error_gives_line_and_column() -> None:
    with pytest.raises(ParseError) as caught:
        parse_domain('{\n  "domain": "x",\n}', file="d.json", syntax="json")
    assert str(caught.value.location) == "d.json:3:1"
    assert caught.value.message.startswith("invalid JSON")


def test_json_nan_is_refused_at_its_place() -> None:
    text = '{"domain": "x", "actions": {"a": {"cost": NaN}}}'
    with pytest.raises(ParseError, match="NaN") as caught:
        parse_domain(text, file="d.json", syntax="json")
    assert str(caught.value.location) == "d.json:1:43"


def test_control_character_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="U\\+0001") as caught:
        parse_domain("domain: x\x01\n", file="d.yaml")
    assert str(caught.value.location) == "d.yaml:1:10"


def test_self_referencing_network_is_refused_not_a_recursion_error() -> None:
    text = "domain: x\ntasks:\n  t:\n    methods:\n      - subtasks: &s [{parallel: [*s]}]\n"
    with pytest.raises(DomainError, match="nests too deeply"):
        parse_domain(text)


def test_self_referencing_merge_is_refused() -> None:
    with pytest.raises(DomainError, match="merge keys"):
        parse_domain("domain: x\ntypes: &t {<<: *t}\n")


@pytest.mark.timeout(30)  # the old walk took minutes: each level merged 9 copies of the last
def test_nested_merge_lists_of_one_alias_are_read_once() -> None:
    levels = ["m0: &m0 {a: 1}"]
    levels += [
        f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * 9)}], k{i}: {i}}}" for i in range(1, 12)
    ]
    root = compose("\n".join([*levels, "top: {<<: *m11}"]) + "\n", "x.yaml")
    src = Source("x.yaml", DomainError)
    top = next(value for key, value in mapping(src, root, "the file") if key.value == "top")
    assert sorted(key.value for key, _ in mapping(src, top, "top")) == sorted(
        ["a", *(f"k{i}" for i in range(1, 12))]
    )


# (id, old, new, "line:col", words in the message, words in the hint)
PROBLEM_CASES = [
    (
        "wrong domain",
        "domain: doc-pipeline",
        "domain: doc",
        "2:9",
        "this problem is for domain 'doc'",
        "domain: doc-pipeline",
    ),
    (
        "negative init",
        "init: [exists(notes)",
        "init: [not exists(notes)",
        "4:8",
        "true atoms only",
        "false",
    ),
    (
        "equality in init",
        "init: [exists(notes)",
        "init: [notes == q3",
        "4:8",
        "cannot hold an equality",
        "true atoms",
    ),
    (
        "unknown object type",
        "q3: report",
        "q3: reprt",
        "3:32",
        "unknown type 'reprt'",
        "did you mean 'report'?",
    ),
    (
        "unknown object in goal",
        "indexed(q3)]",
        "indexed(q4)]",
        "5:32",
        "unknown object 'q4'",
        "did you mean 'q3'?",
    ),
    ("parameter in goal", "indexed(q3)]", "indexed(d)]", "5:32", "unknown object 'd'", "objects:"),
    (
        "unknown predicate in init",
        "exists(q3)]",
        "exist(q3)]",
        "4:23",
        "unknown predicate 'exist'",
        "did you mean 'exists'?",
    ),
    ("unknown key", "init:", "inti:", "4:1", "unknown key 'inti'", "did you mean 'init'?"),
    ("neither goal nor tasks", "goal:", "# goal:", "1:1", "neither a goal nor tasks", "tasks:"),
    (
        "unknown task",
        "goal: [indexed(notes), indexed(q3)]",
        "tasks: [publsh(notes)]",
        "5:9",
        "names neither an action nor a task",
        "did you mean 'publish'?",
    ),
    (
        "task arity",
        "goal: [indexed(notes), indexed(q3)]",
        "tasks: [publish_all(notes)]",
        "5:9",
        "task publish_all takes 2 arguments, got 1",
        "publish_all(document, document)",
    ),
    ("no problem name", "problem: two-docs\n", "", "1:1", "has no 'problem'", "problem:"),
    (
        "duplicate object",
        "objects: {notes: document, q3: report}",
        "objects: {notes: document, notes: report}",
        "3:28",
        "duplicate key 'notes'",
        "keep one",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "where", "message", "hint"),
    [pytest.param(*case[1:], id=case[0]) for case in PROBLEM_CASES],
)
def test_problem_mistake_reports_class_file_line_and_hint(
    old: str, new: str, where: str, message: str, hint: str
) -> None:
    domain = parse_domain(DOMAIN)
    with pytest.raises(ProblemError) as caught:
        parse_problem(_edit(PROBLEM, old, new), domain, file="problem.yaml")
    assert str(caught.value.location).startswith(f"problem.yaml:{where}")
    assert message in caught.value.message
    assert caught.value.hint is not None
    assert hint in caught.value.hint


def test_problem_type_clash_is_an_error() -> None:
    domain = parse_domain("domain: x\ntypes: {a: object, b: object}\npredicates: {p: [a]}\n")
    problem = "problem: p\ndomain: x\nobjects: {o: b}\ninit: [p(o)]\ngoal: []\n"
    with pytest.raises(ProblemError, match="type clash") as caught:
        parse_problem(problem, domain, file="p.yaml")
    assert str(caught.value.location) == "p.yaml:4:10"


def test_object_named_like_a_constant_is_an_error() -> None:
    domain = parse_domain("domain: x\nconstants: {c: object}\n")
    with pytest.raises(ProblemError, match="already a constant") as caught:
        parse_problem(
            "problem: p\ndomain: x\nobjects: {c: object}\ngoal: []\n", domain, file="p.yaml"
        )
    assert str(caught.value.location) == "p.yaml:3:11"


def test_empty_problem_is_an_error() -> None:
    with pytest.raises(ProblemError, match="empty"):
        parse_problem("# nothing\n", parse_domain(DOMAIN), file="p.yaml")


def test_deeply_nested_document_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="nested too deeply"):
        parse_domain("domain: x\ntypes: " + "[" * 3000, file="d.yaml")
    with pytest.raises(ParseError, match="nested too deeply"):
        parse_domain('{"domain": ' + "[" * 3000, file="d.json", syntax="json")
