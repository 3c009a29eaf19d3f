"""``plansmith init``: a draft domain, bindings and problem from live tool schemas.

The drafting is checked on hand-made tool lists (tiers, the conservative data-flow
rule, names, placeholders: the draft reads, plans and binds), and the command on the npm
filesystem and memory reference servers (real processes): ``plansmith check`` passes on
what it writes, for its own problem and for one that runs every action.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from _shared_servers import COUNTER
from plansmith.binding import ToolCatalog, ToolSpec, bind, parse_bindings
from plansmith.cli._draft import Draft, draft, links, tier_of
from plansmith.formats import parse_domain, parse_problem
from plansmith.model import JSONValue
from plansmith.planning import plan

NPM_BIN = Path(__file__).resolve().parents[1] / "servers" / "_npm" / "node_modules" / ".bin"


def _invoke(*args: str) -> tuple[int, str, str]:
    from typer.testing import CliRunner

    import plansmith.cli._check
    import plansmith.cli._init  # noqa: F401
    from plansmith.cli._app import app

    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _obj(required: list[str] | None = None, **props: JSONValue) -> dict[str, JSONValue]:
    schema: dict[str, JSONValue] = {"type": "object", "properties": dict(props)}
    if required is not None:
        schema["required"] = list(required)
    return schema


STR: JSONValue = {"type": "string"}
INT: JSONValue = {"type": "integer", "minimum": 1}
IDS: JSONValue = {"type": "array", "items": {"type": "string"}}
READ: dict[str, JSONValue] = {"readOnlyHint": True}


def _tool(
    name: str,
    inputs: dict[str, JSONValue] | None = None,
    outputs: dict[str, JSONValue] | None = None,
    annotations: dict[str, JSONValue] | None = None,
) -> ToolSpec:
    return ToolSpec(
        name,
        input_schema=inputs or _obj(),
        output_schema=outputs,
        annotations=annotations,
    )


def _comments(text: str) -> str:
    """``text`` with a comment's continued lines joined: a long note is wrapped."""
    return re.sub(r"\n\s*# ", " ", text)


# -- tiers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotations", "tier", "decide"),
    [
        ({"readOnlyHint": True}, "read", False),
        ({"readOnlyHint": True, "destructiveHint": True}, "read", False),
        ({"readOnlyHint": False, "destructiveHint": True}, "write", False),
        ({"destructiveHint": True}, "write", False),
        ({"readOnlyHint": False, "destructiveHint": False}, "write", True),
        ({"readOnlyHint": False}, "write", True),
        (None, "execute", True),
        ({}, "execute", True),
        ({"openWorldHint": True, "title": "x"}, "execute", True),
    ],
)
def test_the_tier_comes_from_the_annotations(
    annotations: dict[str, JSONValue] | None, tier: str, decide: bool
) -> None:
    found, why = tier_of(annotations)
    assert found == tier
    assert ("decide:" in why) is decide


def test_the_domain_says_each_tier_and_asks_to_confirm_the_unannotated() -> None:
    made = draft(
        [
            ("s", _tool("look", annotations={"readOnlyHint": True})),
            ("s", _tool("wipe", annotations={"destructiveHint": True})),
            ("s", _tool("launch")),
        ]
    )
    tiers = {a.name: a.tier for a in made.actions}
    assert tiers == {"s_look": "read", "s_wipe": "write", "s_launch": "execute"}
    domain = parse_domain(made.domain_yaml)
    assert {a.name: a.tier.value for a in domain.actions} == tiers
    assert "tier: execute    # decide: the tool gives no annotations" in made.domain_yaml


# -- data flow -------------------------------------------------------------------------


def test_an_output_feeds_an_input_of_the_same_name_and_type() -> None:
    tools = [
        ("gh", _tool("create", outputs=_obj(["id"], id=STR))),
        ("gh", _tool("close", inputs=_obj(["id"], id=STR))),
    ]
    found, undecided = links(tools)
    assert [(k.prop, k.producer, k.consumer) for k in found] == [("id", "gh_create", "gh_close")]
    assert undecided == {}
    made = draft(tools)
    assert "has_id(id)" in made.domain_yaml
    assert 'id: "${gh_create(id).id}"' in made.bindings_yaml
    assert made.domain_yaml.count("has_id: [id]") == 1


@pytest.mark.parametrize(
    "tools",
    [
        # no outputSchema: nothing is declared, nothing is linked
        [("a", _tool("make")), ("a", _tool("use", inputs=_obj(["id"], id=STR)))],
        # the same name, another type
        [
            ("a", _tool("make", outputs=_obj(["id"], id=INT))),
            ("a", _tool("use", inputs=_obj(["id"], id=STR))),
        ],
        # arrays of other items
        [
            ("a", _tool("make", outputs=_obj(["ids"], ids={"type": "array", "items": INT}))),
            ("a", _tool("use", inputs=_obj(["ids"], ids=IDS))),
        ],
        # an array whose items say no type
        [
            ("a", _tool("make", outputs=_obj(["ids"], ids={"type": "array"}))),
            ("a", _tool("use", inputs=_obj(["ids"], ids={"type": "array"}))),
        ],
        # the output is not required: the tool may leave it out
        [
            ("a", _tool("make", outputs=_obj([], id=STR))),
            ("a", _tool("use", inputs=_obj(["id"], id=STR))),
        ],
        # the input is optional
        [
            ("a", _tool("make", outputs=_obj(["id"], id=STR))),
            ("a", _tool("use", inputs=_obj([], id=STR))),
        ],
        # another name
        [
            ("a", _tool("make", outputs=_obj(["key"], key=STR))),
            ("a", _tool("use", inputs=_obj(["id"], id=STR))),
        ],
        # a tool's own output
        [("a", _tool("renew", inputs=_obj(["id"], id=STR), outputs=_obj(["id"], id=STR)))],
        # no type declared on either side
        [
            ("a", _tool("make", outputs=_obj(["id"], id={}))),
            ("a", _tool("use", inputs=_obj(["id"], id={}))),
        ],
    ],
)
def test_no_link_is_claimed_that_the_schemas_do_not_show(
    tools: list[tuple[str, ToolSpec]],
) -> None:
    found, undecided = links(tools)
    assert found == []
    assert undecided == {}
    made = draft(tools)
    assert "has_" not in made.domain_yaml.split("domain:", 1)[1]
    assert "(id).id}" not in made.bindings_yaml


def test_several_producers_or_a_chain_are_left_to_a_person() -> None:
    tools = [
        ("a", _tool("make", outputs=_obj(["id"], id=STR))),
        ("b", _tool("make", outputs=_obj(["id"], id=STR))),
        ("a", _tool("use", inputs=_obj(["id"], id=STR))),
        ("a", _tool("first", outputs=_obj(["key"], key=STR))),
        ("a", _tool("then", inputs=_obj(["key"], key=STR), outputs=_obj(["page"], page=STR))),
        ("a", _tool("last", inputs=_obj(["page"], page=STR))),
    ]
    found, undecided = links(tools)
    assert [(k.prop, k.producer, k.consumer) for k in found] == [("key", "a_first", "a_then")]
    assert undecided == {("a_use", "id"): ["a_make", "b_make"], ("a_last", "page"): ["a_then"]}
    made = draft(tools)
    said = _comments(made.bindings_yaml)
    assert "id (string) is an output of a_make, b_make; not linked: several tools" in said
    assert "page (string) is an output of a_then; not linked: its producer is fed by a link" in said
    assert _binds(made, tools, _every_action_problem(made, "draft")) == 6


def test_a_consumer_takes_its_producers_parameters_to_name_its_step() -> None:
    tools = [
        ("gh", _tool("create", _obj(["title"], title=STR), _obj(["number"], number=INT))),
        ("gh", _tool("comment", _obj(["number", "title"], number=INT, title=STR))),
    ]
    made = draft(tools)
    assert [(k.prop, k.producer, k.consumer) for k in made.links] == [
        ("number", "gh_create", "gh_comment")
    ]
    create, comment = made.actions
    assert create.params == [("title", "title"), ("number", "number")]
    assert create.effect == ["did_gh_create(title, number)", "has_number(number)"]
    # its own title is another object than the one the issue was made with
    assert comment.params == [("number", "number"), ("title", "title"), ("title_2", "title")]
    assert comment.precondition == ["did_gh_create(title_2, number)"]
    assert 'number: "${gh_create(title_2, number).number}"' in made.bindings_yaml
    assert _binds(made, tools, _every_action_problem(made, "draft")) == 2


# -- the draft reads, plans and binds --------------------------------------------------


def _catalog(tools: list[tuple[str, ToolSpec]]) -> ToolCatalog:
    servers: dict[str, list[ToolSpec]] = {}
    for server, tool in tools:
        servers.setdefault(server, []).append(tool)
    return ToolCatalog(tuple((s, tuple(t)) for s, t in servers.items()))


def _every_action_problem(made: Draft, domain: str) -> str:
    """A problem whose goal is the effect of every drafted action, one object per type."""
    objects: dict[str, str] = {}
    goal = []
    for action in made.actions:
        args = []
        for _, kind in action.params:
            objects.setdefault(f"{kind}_1", kind)
            args.append(f"{kind}_1")
        goal.append(f"did_{action.name}({', '.join(args)})")
    written = ", ".join(f"{o}: {t}" for o, t in objects.items())
    return (
        f"problem: every-action\ndomain: {domain}\nobjects: {{{written}}}\ninit: []\n"
        f"goal: [{', '.join(goal)}]\n"
    )


def _binds(made: Draft, tools: list[tuple[str, ToolSpec]], problem_text: str) -> int:
    domain = parse_domain(made.domain_yaml, file="domain.yaml")
    problem = parse_problem(problem_text, domain, file="problem.yaml")
    bindings = parse_bindings(made.bindings_yaml, source="bindings.yaml")
    bound = bind(plan(problem), domain, bindings, _catalog(tools), env={})
    return len(bound.steps)


MESSY = [
    ("my-server", _tool("get.item", _obj(["item-id"], **{"item-id": STR}), None, {})),
    (
        "my-server",
        _tool(
            "put item",
            _obj(
                ["object", "not", "count", "flag", "tags", "spec"],
                object=STR,
                **{"not": STR},
                count=INT,
                flag={"type": "boolean"},
                tags={"type": "array", "items": STR, "minItems": 2},
                spec={
                    "type": "object",
                    "properties": {"mode": {"enum": ["fast", "slow"]}, "n": {"type": "number"}},
                    "required": ["mode", "n"],
                    "additionalProperties": False,
                },
                extra=STR,
            ),
            _obj(["ok"], ok={"type": "boolean"}, **{"odd name": STR}),
            {"readOnlyHint": False, "destructiveHint": True},
        ),
    ),
    ("2nd", _tool("list", outputs=_obj(["tickets"], tickets=IDS), annotations=READ)),
    ("2nd", _tool("close", _obj(["tickets"], tickets=IDS))),
    ("my", _tool("server-get-item")),  # my-server.get.item's action name: made unique
]


def test_a_messy_draft_reads_plans_and_binds_every_action() -> None:
    made = draft(MESSY, domain="my servers!")
    names = [a.name for a in made.actions]
    assert names == [
        "my_server_get_item",
        "my_server_put_item",
        "_2nd_list",
        "_2nd_close",
        "my_server_get_item_2",
    ]
    assert [(k.prop, k.producer, k.consumer) for k in made.links] == [
        ("tickets", "_2nd_list", "_2nd_close")
    ]
    put = made.actions[1]
    assert [p for p, _ in put.params] == ["object_", "not_"]
    assert made.goal_action == "_2nd_list"  # read-only, nothing to decide
    # the draft's own problem, and one that runs every action, plan and bind
    assert _binds(made, MESSY, made.problem_yaml) == 1
    assert _binds(made, MESSY, _every_action_problem(made, "my-servers")) == 5
    bindings = made.bindings_yaml
    assert "decide: integer, required; this placeholder fits the schema (a parameter" in (
        _comments(bindings)
    )
    assert "      count: 1\n" in bindings
    assert 'tags: ["TODO", "TODO"]' in bindings
    assert '"spec": ' not in bindings
    assert 'spec: {"mode": "fast", "n": 0}' in bindings
    assert "# optional inputs: extra (string)" in bindings
    assert '"odd name": {path: "$.structured[\\"odd name\\"]", optional: true}' not in bindings
    assert 'odd_name: {path: "$.structured[\\"odd name\\"]", optional: true}' in bindings
    assert 'text: "$.text"' in bindings  # a tool without an outputSchema


def test_the_link_rule_is_written_at_the_top_of_the_domain() -> None:
    made = draft([("s", _tool("t"))])
    head = made.domain_yaml.split("\ndomain:", 1)[0]
    assert all(line.startswith("#") for line in head.splitlines())
    assert "same name and JSON type" in head
    assert "has_NAME(x)" in head


# -- the command, on real servers ------------------------------------------------------


def _servers(tmp_path: Path, **servers: dict[str, object]) -> Path:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def _npm(tmp_path: Path) -> dict[str, dict[str, object]]:
    if not (NPM_BIN / "mcp-server-memory").exists():
        pytest.skip("run `npm ci --prefix tests/servers/_npm` to install the reference servers")
    root = tmp_path / "root"
    root.mkdir()
    return {
        "files": {"command": str(NPM_BIN / "mcp-server-filesystem"), "args": [str(root)]},
        "memory": {
            "command": str(NPM_BIN / "mcp-server-memory"),
            "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")},
            "maxInFlight": 1,
        },
    }


def _every_action_file(out: Path) -> Path:
    """A problem that runs every action of the draft in ``out``, read from its domain."""
    text = (out / "domain.yaml").read_text()
    domain = re.search(r"^domain: (\S+)$", text, re.M)
    assert domain is not None
    objects: dict[str, str] = {}
    goal = []
    for pred, kinds in re.findall(r"^  (did_\w+): \[(.*)\]$", text, re.M):
        args = [f"{k}_1" for k in kinds.split(", ") if k]
        objects.update({f"{k}_1": k for k in kinds.split(", ") if k})
        goal.append(f"{pred}({', '.join(args)})")
    written = ", ".join(f"{o}: {t}" for o, t in objects.items())
    path = out / "every-action.yaml"
    path.write_text(
        f"problem: every-action\ndomain: {domain.group(1)}\nobjects: {{{written}}}\n"
        f"init: []\ngoal: [{', '.join(goal)}]\n"
    )
    return path


def test_init_drafts_from_the_reference_servers_and_check_passes(tmp_path: Path) -> None:
    servers = _servers(tmp_path, **_npm(tmp_path))
    out = tmp_path / "draft"
    code, said, err = _invoke("init", "-s", str(servers), "-o", str(out))
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["bindings.yaml", "domain.yaml", "problem.yaml"]
    assert "drafted 23 actions from 2 server(s) (files, memory)" in said
    domain = (out / "domain.yaml").read_text()
    assert "  memory_read_graph:" in domain
    assert "  files_write_file:" in domain
    assert "tier: read    # readOnlyHint: true" in domain
    assert "tier: write    # destructiveHint: true" in domain
    bindings = (out / "bindings.yaml").read_text()
    assert 'path: "${path}"' in bindings
    assert "content (string) is an output of files_read_file" in _comments(bindings)
    check = ["check", str(out / "domain.yaml"), "-s", str(servers), "-b"]
    check.append(str(out / "bindings.yaml"))
    code, said, err = _invoke(*check[:2], str(out / "problem.yaml"), *check[2:])
    assert code == 0, err
    assert said.startswith("ok: 1 steps bound")
    code, said, err = _invoke(*check[:2], str(_every_action_file(out)), *check[2:])
    assert code == 0, err
    assert said.startswith("ok: 23 steps bound to 23 of the 23 tools of 2 server(s)")


def test_init_drafts_a_link_between_the_tools_chosen(tmp_path: Path) -> None:
    servers = _servers(tmp_path, **_npm(tmp_path))
    out = tmp_path / "draft"
    chosen = "memory.create_relations,memory.read_graph"
    code, said, err = _invoke("init", "-s", str(servers), "--tools", chosen, "-o", str(out))
    assert code == 0, err
    assert "drafted 2 actions from 1 server(s) (memory), 1 data-flow link(s)" in said
    bindings = (out / "bindings.yaml").read_text()
    assert 'relations: "${memory_read_graph(relations).relations}"' in bindings
    every = _every_action_file(out)
    code, said, err = _invoke(
        "check", str(out / "domain.yaml"), str(every), "-s", str(servers), "-b",
        str(out / "bindings.yaml"),
    )  # fmt: skip
    assert code == 0, err
    assert said.startswith("ok: 2 steps bound")


def test_init_links_a_producer_that_takes_parameters(tmp_path: Path) -> None:
    """read_text_file(path) gives content, which write_file takes: write_file takes the
    read's path too, to name its step, and check binds the copy."""
    servers = _servers(tmp_path, **_npm(tmp_path))
    out = tmp_path / "copy"
    chosen = "files.read_text_file,files.write_file"
    code, said, err = _invoke("init", "-s", str(servers), "--tools", chosen, "-o", str(out))
    assert code == 0, err
    assert "1 data-flow link(s)" in said
    domain = (out / "domain.yaml").read_text()
    assert "precondition: [did_files_read_text_file(path_2, content)]" in domain
    assert "# path_2: files_read_text_file's path" in domain
    bindings = (out / "bindings.yaml").read_text()
    assert 'content: "${files_read_text_file(path_2, content).content}"' in bindings
    problem = out / "copy.yaml"
    problem.write_text(
        "problem: copy\ndomain: copy\nobjects: {src: path, dst: path, text: content}\n"
        "init: []\ngoal: [did_files_write_file(dst, text, src)]\n"
    )
    code, said, err = _invoke(
        "check", str(out / "domain.yaml"), str(problem), "-s", str(servers), "-b",
        str(out / "bindings.yaml"),
    )  # fmt: skip
    assert code == 0, err
    assert said.startswith("ok: 2 steps bound to 2 of the 14 tools of 1 server(s)")


def test_a_server_that_does_not_start_is_reported_and_the_others_drafted(tmp_path: Path) -> None:
    servers = _servers(
        tmp_path,
        counter={"command": sys.executable, "args": [str(COUNTER)]},
        missing={"command": str(tmp_path / "no-such-server")},
    )
    out = tmp_path / "draft"
    code, said, err = _invoke("init", "-s", str(servers), "-o", str(out))
    assert code == 5
    assert "server 'missing' did not start" in err
    assert "drafted " in said
    assert "from 1 server(s) (counter)" in said
    domain = (out / "domain.yaml").read_text()
    assert "decide: not drafted, the server(s) did not start: missing" in domain
    code, _, err = _invoke(
        "check", str(out / "domain.yaml"), str(out / "problem.yaml"), "-s", str(servers),
        "-b", str(out / "bindings.yaml"),
    )  # fmt: skip
    assert code == 0, err


def test_no_server_started_is_an_error_and_nothing_is_written(tmp_path: Path) -> None:
    servers = _servers(tmp_path, missing={"command": str(tmp_path / "no-such-server")})
    out = tmp_path / "draft"
    code, _, err = _invoke("init", "-s", str(servers), "-o", str(out))
    assert code == 5
    assert "no tools to draft from" in err
    assert not out.exists()


# -- refusals --------------------------------------------------------------------------


@pytest.fixture
def counter(tmp_path: Path) -> Path:
    return _servers(tmp_path, counter={"command": sys.executable, "args": [str(COUNTER)]})


def test_a_directory_that_is_not_empty_is_refused_unless_forced(
    tmp_path: Path, counter: Path
) -> None:
    out = tmp_path / "draft"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    code, _, err = _invoke("init", "-s", str(counter), "-o", str(out))
    assert code == 2
    assert "is not empty" in err
    assert "--force" in err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    code, _, err = _invoke("init", "-s", str(counter), "-o", str(out), "--force")
    assert code == 0, err
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "domain.yaml").exists()


def test_an_output_that_is_a_file_is_refused(tmp_path: Path, counter: Path) -> None:
    out = tmp_path / "draft"
    out.write_text("x")
    code, _, err = _invoke("init", "-s", str(counter), "-o", str(out), "--force")
    assert code == 2
    assert "is not a directory" in err


def test_unknown_tools_list_what_there_is(tmp_path: Path, counter: Path) -> None:
    out = tmp_path / "draft"
    code, _, err = _invoke("init", "-s", str(counter), "-o", str(out), "--tools", "countr.work")
    assert code == 2
    assert "--tools names no server 'countr'" in err
    assert "the servers are: counter" in err
    code, _, err = _invoke("init", "-s", str(counter), "-o", str(out), "--tools", "counter.wrok")
    assert code == 2
    assert "server 'counter' has no tool 'wrok'" in err
    assert "did you mean 'work'?" in err
    assert "its tools are: " in err
    code, _, err = _invoke("init", "-s", str(counter), "-o", str(out), "--tools", "work")
    assert code == 2
    assert "'work' is not SERVER.TOOL" in err
    assert not out.exists()


def test_tools_choose_the_actions(tmp_path: Path, counter: Path) -> None:
    out = tmp_path / "draft"
    code, said, err = _invoke(
        "init", "-s", str(counter), "-o", str(out), "--tools", "counter.work", "--tools",
        "counter.echo",
    )  # fmt: skip
    assert code == 0, err
    assert "drafted 2 actions" in said
    bindings = (out / "bindings.yaml").read_text()
    assert "tool: work" in bindings
    assert "tool: echo" in bindings


def test_names_that_yaml_or_a_comment_would_misread_are_kept_as_they_are() -> None:
    tools = [
        (
            "null",
            ToolSpec(
                "true",
                input_schema=_obj(["yes"], yes=STR),
                output_schema=_obj(["a_b", "a-b"], a_b=STR, **{"a-b": STR}),
                title="Two\nlines # and a hash",
                annotations=READ,
            ),
        ),
        ("null", _tool("on", _obj(["a-b"], **{"a-b": STR}))),
    ]
    made = draft(tools)
    assert [(k.prop, k.producer, k.consumer) for k in made.links] == [
        ("a-b", "null_true", "null_on")
    ]
    bindings = made.bindings_yaml
    assert 'server: "null"' in bindings
    assert 'tool: "true"' in bindings
    assert '"a-b": "${null_true(yes, a_b).a_b_2}"' in bindings  # "a-b"'s output, not a_b's
    assert _binds(made, tools, _every_action_problem(made, "draft")) == 2
    titled = draft([("s", ToolSpec("t", title="Two\nlines", input_schema=_obj(["yes"], yes=STR)))])
    assert "# s.t: Two lines" in titled.domain_yaml
    assert 'yes: "${yes}"' not in titled.bindings_yaml
    assert '"yes": "${yes}"' in titled.bindings_yaml
    assert _binds(titled, [("s", titled.actions[0].tool)], titled.problem_yaml) == 1
