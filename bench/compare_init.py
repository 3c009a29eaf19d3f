"""``plansmith init`` on the servers of plansmith's own domains, against the hand-written
domains (issue 29; the tables are in docs/own-servers.md, "What init recovers from
plansmith's own servers").

For each domain (bio, code, research) this starts its real servers over stdio, in a
temporary folder (bio: ``plansmith-bio`` on the shipped sequences; code:
``plansmith-code`` on a small git repository with a ``plansmith-code.toml``; research:
one ``plansmith-corpus`` per planted source folder), runs ``plansmith init`` and
``plansmith tools --json`` on them, and compares the draft with the shipped
``domain.yaml`` and ``bindings.yaml``:

- **actions**: each hand-written action's tool (server and tool of its binding), whether
  the draft has an action for it, and both tiers; the tools the draft has that no
  hand-written action uses;
- **links**: each data-flow dependency between two tools of the hand-written domain (a
  precondition of an action that an effect of another action establishes, or a binding
  argument that reads another step's output, ``${A(...).out}``), whether the draft links
  the same two tools (recovered) or not (missed, with the reason read off the schemas
  and bindings);
- **extra links**: links the draft claims between two tools that the hand-written domain
  does not link, each with what the schemas show and what the hand-written binding does
  instead.

Nothing here is timed. ``--json`` prints the rows and counts as one JSON document.

    .venv/bin/python bench/compare_init.py [bio code research] [--json] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from plansmith.binding import Binding, parse_bindings
from plansmith.cli._draft import json_type  # init's own rule: the draft is judged by it
from plansmith.formats import parse_domain
from plansmith.model import Domain, Literal

__all__ = [
    "DOMAINS",
    "ActionRow",
    "Comparison",
    "ExtraRow",
    "LinkRow",
    "compare_all",
    "compare_domain",
    "counts_of",
    "main",
    "render_markdown",
    "summary_line",
]

ROOT = Path(__file__).resolve().parents[1]
DOMAIN_ROOT = ROOT / "src" / "plansmith" / "domains"
DOMAINS = ("bio", "code", "research")
#: seconds a server may take to answer ``initialize`` (generous: nothing here is timed)
START_TIMEOUT = 120.0

Schema = Mapping[str, Any]
ToolKey = tuple[str, str]  # (server, tool) as the live servers name them

_REF = re.compile(r"\$\{([A-Za-z_]\w*)\(([^()]*)\)\.([A-Za-z_]\w*)\}")
_WHOLE_REF = re.compile(r"^\$\{([A-Za-z_]\w*)\(([^()]*)\)\.([A-Za-z_]\w*)\}$")
_PARAM = re.compile(r"\$\{[A-Za-z_]\w*\}")
_PRINTED = re.compile(
    r"drafted (\d+) actions from (\d+) server\(s\) \([^)]*\), (\d+) data-flow link\(s\)"
)


# -- the servers of each domain ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Setup:
    """How a domain's servers are started here: the servers file, the live servers each
    server of its bindings stands for, and the servers of its bindings that are not MCP
    servers (with why)."""

    servers_file: Path
    stands_for: Mapping[str, tuple[str, ...]]
    not_served: Mapping[str, str] = field(default_factory=dict)
    how: str = ""


def _python_server(module: str, *args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", module, *args]}


def _write_servers(work: Path, servers: Mapping[str, Any]) -> Path:
    path = work / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2) + "\n", encoding="utf-8")
    return path


def setup_bio(work: Path) -> Setup:
    """``plansmith-bio`` as the shipped servers.json starts it (its run root and named
    inputs, here the shipped query and family FASTA files, as arguments)."""
    data = DOMAIN_ROOT / "bio" / "data"
    runs = work / "runs"
    runs.mkdir()
    server = _python_server(
        "plansmith.domains.bio.server",
        "--run-root",
        str(runs),
        "--input",
        f"query={data / 'query.fasta'}",
        "--input",
        f"family={data / 'family.fasta'}",
    )
    return Setup(
        _write_servers(work, {"bio": server}),
        {"bio": ("bio",)},
        how="plansmith-bio --run-root RUNS --input query=data/query.fasta"
        " --input family=data/family.fasta",
    )


def _git(repo: Path, *args: str) -> None:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(repo.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x",
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def setup_code(work: Path) -> Setup:
    """``plansmith-code --config FILE`` (as the shipped servers.json) at the execute tier,
    so that it lists every tool, on a one-commit repository with a plansmith-code.toml
    (tests/_shop_repo.py's shop)."""
    repo = work / "shop"
    (repo / "shop").mkdir(parents=True)
    (repo / "shop" / "__init__.py").write_text("", encoding="utf-8")
    (repo / "shop" / "calc.py").write_text("def double(x):\n    return x + x\n", encoding="utf-8")
    (repo / "plansmith-code.toml").write_text(
        '[commands]\ntest = ["python", "-m", "pytest", "-q"]\n', encoding="utf-8"
    )
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "shop")
    config = work / "code-server.json"
    settings = {
        "repo": str(repo),
        "tier": "execute",
        "worktree_root": str(work / "worktrees"),
        "state_dir": str(work / "code-state"),
    }
    config.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    server = _python_server("plansmith.domains.code.server", "--config", str(config))
    return Setup(
        _write_servers(work, {"code": server}),
        {"code": ("code",)},
        how="plansmith-code --config FILE (tier execute, a git repository with"
        " plansmith-code.toml)",
    )


def setup_research(work: Path) -> Setup:
    """One ``plansmith-corpus`` per source folder, as ``plansmith research --source DIR``
    starts them (``_sources.server_config``), on the planted sources ``blog`` and
    ``notes``. The bindings' ``corpus`` server stands for every source's server; the
    ``desk`` is no MCP server (the research runner calls it in process)."""
    from plansmith.domains.research._sources import server_config

    planted = DOMAIN_ROOT / "research" / "planted"
    state = work / "state"
    state.mkdir()
    sources = {"blog": planted / "blog", "notes": planted / "notes"}
    made = server_config(sources, state, python=sys.executable)
    servers = made["mcpServers"]
    assert isinstance(servers, dict)
    return Setup(
        _write_servers(work, servers),
        {"corpus": tuple(sources), "desk": ()},
        {"desk": "no MCP server: the desk runs in process (research/desk/_invoker.py)"},
        how="plansmith-corpus --source NAME --root planted/NAME (blog, notes)",
    )


SETUPS: dict[str, Callable[[Path], Setup]] = {
    "bio": setup_bio,
    "code": setup_code,
    "research": setup_research,
}


# -- running init and tools ----------------------------------------------------------------


def _plansmith(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plansmith", *args], capture_output=True, text=True, check=False
    )


def init_command(servers: Path, out: Path) -> list[str]:
    """The ``plansmith init`` command run on ``servers``, writing to ``out``."""
    return ["init", "-s", str(servers), "-o", str(out), "--start-timeout", str(START_TIMEOUT)]


@dataclass(frozen=True, slots=True)
class LiveTool:
    """A tool as its server lists it."""

    input_schema: Schema
    output_schema: Schema | None
    annotations: Schema


def _survey(servers: Path) -> dict[ToolKey, LiveTool]:
    done = _plansmith("tools", "-s", str(servers), "--json", "--start-timeout", str(START_TIMEOUT))
    if done.returncode != 0:
        raise RuntimeError(f"plansmith tools failed ({done.returncode}): {done.stderr[-2000:]}")
    found: dict[ToolKey, LiveTool] = {}
    for server in json.loads(done.stdout)["servers"]:
        for tool in server["tools"]:
            found[(server["name"], tool["name"])] = LiveTool(
                tool.get("input_schema") or {},
                tool.get("output_schema"),
                tool.get("annotations") or {},
            )
    return found


# -- the rows --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ActionRow:
    """A hand-written action, its tool and what the draft made of that tool."""

    action: str
    tool: str  # SERVER.TOOL of its binding
    drafted_as: tuple[str, ...]  # the draft's actions for it (none: not drafted)
    tier: str
    draft_tier: str | None
    note: str = ""  # why it is not drafted


@dataclass(frozen=True, slots=True)
class LinkRow:
    """A data-flow dependency between two tools of the hand-written domain."""

    producer: str  # SERVER.TOOL
    consumer: str
    hand: tuple[str, ...]  # what shows it: "fact: A -> B", "B.input <- A.output"
    recovered: bool
    drafted: tuple[str, ...]  # the draft's links between the two tools (input <- output)
    why: str  # why missed ("" when recovered)


@dataclass(frozen=True, slots=True)
class ExtraRow:
    """A draft link between two tools that the hand-written domain does not link."""

    producer: str
    consumer: str
    prop: str
    why: str


@dataclass(slots=True)
class Comparison:
    """One domain's comparison."""

    domain: str
    how: str
    init_printed: str
    actions: list[ActionRow]
    unused: list[str]  # draft tools no hand-written action uses
    links: list[LinkRow]
    extras: list[ExtraRow]
    draft_actions: int
    draft_links: int
    #: each draft link as (producer, consumer, prop): checked against the schemas
    draft_link_list: list[tuple[str, str, str]]
    schema_errors: list[str]  # draft links the schemas do not show (must be none)


def counts_of(c: Comparison) -> dict[str, int]:
    """The counts the summary line prints, computed from the rows."""
    served = [a for a in c.actions if not a.note]
    return {
        "actions": len(c.actions),
        "served": len(served),
        "drafted": sum(1 for a in c.actions if a.drafted_as),
        "tiers_equal": sum(1 for a in served if a.drafted_as and a.tier == a.draft_tier),
        "unused_tools": len(c.unused),
        "links": len(c.links),
        "recovered": sum(1 for k in c.links if k.recovered),
        "missed": sum(1 for k in c.links if not k.recovered),
        "extra_links": len(c.extras),
        "draft_actions": c.draft_actions,
        "draft_links": c.draft_links,
    }


def summary_line(c: Comparison) -> str:
    n = counts_of(c)
    return (
        f"{c.domain}: actions drafted {n['drafted']}/{n['actions']}"
        f" ({n['served']} on MCP servers), tiers equal {n['tiers_equal']}/{n['served']},"
        f" draft tools unused {n['unused_tools']}; links recovered"
        f" {n['recovered']}/{n['links']}, missed {n['missed']}, extra {n['extra_links']};"
        f" draft: {n['draft_actions']} actions, {n['draft_links']} links"
    )


# -- schema helpers --------------------------------------------------------------------


def _props(schema: Schema | None) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return dict(props) if isinstance(props, dict) else {}


def _required(schema: Schema | None) -> set[str]:
    req = schema.get("required") if isinstance(schema, Mapping) else None
    return {r for r in req if isinstance(r, str)} & set(_props(schema)) if req else set()


def described_type(schema: Any) -> str:
    """A property's type in words, for a reason (``$ref`` and unions included)."""
    if not isinstance(schema, dict):
        return "any"
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return ref.rsplit("/", 1)[-1]
    kind = schema.get("type")
    if kind == "array":
        return f"array of {described_type(schema.get('items'))}"
    if isinstance(kind, str):
        return kind
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            return " | ".join(described_type(b) for b in branches)
    return "any"


def _described(schema: Schema | None, prop: str) -> str:
    """The description of property ``prop`` of ``schema``, or ``""``."""
    said = _props(schema).get(prop)
    text = said.get("description") if isinstance(said, dict) else None
    return " ".join(text.split()) if isinstance(text, str) else ""


def _output_property(path: str) -> tuple[str, str] | None:
    """``$.structured.NAME.rest`` -> (NAME, rest); None for a path not in the
    structured result."""
    found = re.match(r"^\$\.structured(?:\.([A-Za-z_]\w*)|\[['\"]([^'\"]+)['\"]\])(.*)$", path)
    if not found:
        return None
    return found.group(1) or found.group(2), found.group(3)


# -- the comparison ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Dep:
    producer: str  # hand-written actions
    consumer: str
    shown_by: str  # "fact NAME" or "INPUT <- OUTPUT"
    ref: tuple[str, str] | None = None  # (consumer input, producer output name)


def _arguments(binding: Binding | None) -> dict[str, Any]:
    """A binding's arguments (a mapping in every binding here)."""
    args = binding.arguments if binding is not None else None
    return dict(args) if isinstance(args, dict) else {}


def _dependencies(domain: Domain, bindings: Mapping[str, Binding]) -> list[_Dep]:
    """The hand-written data flow: a positive precondition of an action that a positive
    effect of another action establishes; a binding argument that reads another step's
    output."""
    deps: list[_Dep] = []
    makers: dict[str, list[str]] = {}
    for action in domain.actions:
        for made in action.effect:
            if made.positive:
                makers.setdefault(made.atom.predicate, []).append(action.name)
    for action in domain.actions:
        for lit in action.precondition:
            if not isinstance(lit, Literal) or not lit.positive:
                continue  # equalities and negative facts need no maker
            deps.extend(
                _Dep(maker, action.name, f"fact {lit.atom.predicate}")
                for maker in dict.fromkeys(makers.get(lit.atom.predicate, []))
                if maker != action.name
            )
        binding = bindings.get(action.name)
        for key, value in _arguments(binding).items():
            for ref in _REF.finditer(value if isinstance(value, str) else ""):
                maker, out = ref.group(1), ref.group(3)
                deps.append(_Dep(maker, action.name, f"{key} <- {maker}.{out}", (key, out)))
    return deps


def _shown(group: Sequence[_Dep]) -> tuple[str, ...]:
    """What shows a group's dependencies: each fact with its makers and users, each
    argument that reads an output."""
    facts: dict[str, tuple[dict[str, None], dict[str, None]]] = {}
    said: list[str] = []
    for d in group:
        if d.ref is None:
            makers, users = facts.setdefault(d.shown_by.split(" ", 1)[1], ({}, {}))
            makers[d.producer] = users[d.consumer] = None
        else:
            said.append(f"{d.consumer}.{d.shown_by}")
    fact_lines = [
        f"fact {fact}: {', '.join(makers)} -> {', '.join(users)}"
        for fact, (makers, users) in facts.items()
    ]
    return tuple(dict.fromkeys([*fact_lines, *said]))


def _template(value: Any) -> str | None:
    """A binding argument with its objects abstracted (``${run.dir}/${s}.fasta`` ->
    ``${run.dir}/${.}.fasta``), if it names a run file."""
    if not isinstance(value, str) or "${run.dir}" not in value:
        return None
    return _PARAM.sub("${.}", value)


class _Compare:
    def __init__(
        self,
        name: str,
        setup: Setup,
        live: Mapping[ToolKey, LiveTool],
        draft_dir: Path,
        printed: str,
    ) -> None:
        self.name, self.setup, self.live, self.printed = name, setup, live, printed
        here = DOMAIN_ROOT / name
        self.domain = parse_domain((here / "domain.yaml").read_text(encoding="utf-8"))
        hand = parse_bindings((here / "bindings.yaml").read_text(encoding="utf-8"))
        self.bindings = {b.action: b for b in hand.bindings}
        self.draft_domain = parse_domain((draft_dir / "domain.yaml").read_text(encoding="utf-8"))
        drafted = parse_bindings((draft_dir / "bindings.yaml").read_text(encoding="utf-8"))
        self.draft_bindings = {b.action: b for b in drafted.bindings}
        self.draft_tier = {a.name: a.tier.value for a in self.draft_domain.actions}
        self.draft_of: dict[ToolKey, list[str]] = {}
        for b in drafted.bindings:
            self.draft_of.setdefault((b.server, b.tool), []).append(b.action)
        self.draft_links = self._draft_links()

    # each tool is named SERVER.TOOL as the live servers name it
    def _live_keys(self, action: str) -> list[ToolKey]:
        b = self.bindings[action]
        return [(s, b.tool) for s in self.setup.stands_for.get(b.server, (b.server,))]

    def _hand_tool(self, action: str) -> str:
        b = self.bindings[action]
        keys = self._live_keys(action)
        if len(keys) == 1 and keys[0][0] == b.server:
            return f"{b.server}.{b.tool}"
        stood = ", ".join(s for s, _ in keys) or "no MCP server"
        return f"{b.server}.{b.tool} ({stood})"

    def _draft_links(self) -> list[tuple[ToolKey, ToolKey, str, str]]:
        """Each draft link: (producer, consumer, the producer's output property, the
        consumer's input), read off the draft's bindings (``${A(...).out}``)."""
        found = []
        for b in self.draft_bindings.values():
            for key, value in _arguments(b).items():
                ref = _WHOLE_REF.match(value) if isinstance(value, str) else None
                if not ref:
                    continue
                maker = self.draft_bindings[ref.group(1)]
                path = dict(maker.outputs)[ref.group(3)]
                prop = _output_property(path if isinstance(path, str) else "")
                if prop is None or prop[1]:
                    raise ValueError(f"a draft output that is not a whole property: {path}")
                found.append(((maker.server, maker.tool), (b.server, b.tool), prop[0], key))
        return found

    def actions(self) -> list[ActionRow]:
        rows = []
        for action in self.domain.actions:
            b = self.bindings[action.name]
            why = self.setup.not_served.get(b.server, "")
            if action.ask is not None:  # an ask action: a person answers it, no tool
                why = "an ask action: a person answers it"
            drafted = [d for k in self._live_keys(action.name) for d in self.draft_of.get(k, [])]
            tiers = sorted({self.draft_tier[d] for d in drafted})
            rows.append(
                ActionRow(
                    action.name,
                    self._hand_tool(action.name),
                    tuple(drafted),
                    action.tier.value,
                    "/".join(tiers) if tiers else None,
                    why,
                )
            )
        return rows

    def unused(self) -> list[str]:
        used = {k for a in self.bindings for k in self._live_keys(a)}
        return [f"{s}.{t}" for (s, t) in self.draft_of if (s, t) not in used]

    def _producers(self, prop: str, kind: str | None) -> list[ToolKey]:
        """The live tools whose outputSchema requires ``prop`` of type ``kind``."""
        return [
            key
            for key, tool in self.live.items()
            if prop in _required(tool.output_schema)
            and kind is not None
            and json_type(_props(tool.output_schema)[prop]) == kind
        ]

    def _ref_reason(self, maker: str, eater: str, key: str, out: str) -> str:
        """Why the draft does not link input ``key`` of ``eater``'s tool to output
        ``out`` of ``maker``'s binding (hand-written actions)."""
        pk, ck = self._live_keys(maker)[0], self._live_keys(eater)[0]
        p, c = self.live[pk], self.live[ck]
        path = dict(self.bindings[maker].outputs).get(out)
        where = _output_property(path if isinstance(path, str) else "")
        if where is None:
            return f"{key} <- {out}: not an output of the outputSchema ({path})"
        prop, rest = where
        if rest:
            return f"{key} <- {prop}{rest}: a field inside an output (init links whole outputs)"
        if prop != key:
            return f"{key} <- {prop}: names differ"
        if key not in _required(c.input_schema):
            return f"{key}: optional input of {ck[1]} (init links required inputs)"
        if prop not in _required(p.output_schema):
            return f"{key}: optional output of {pk[1]}"
        pt = json_type(_props(p.output_schema)[prop])
        ct = json_type(_props(c.input_schema)[key])
        if pt is None or ct is None:
            shown = described_type(_props(p.output_schema)[prop])
            return f"{key}: type not declared ({shown}; init links declared JSON types)"
        if pt != ct:
            return f"{key}: types differ ({pt} / {ct})"
        others = [k for k in self._producers(prop, pt) if k not in (pk, ck)]
        if others:
            named = ", ".join(t for _, t in [pk, *others])
            return f"{key}: several tools give it ({named}; left to decide)"
        if any(link[1] == pk for link in self.draft_links):
            return f"{key}: {pk[1]} is itself fed by a link (no chains)"
        return f"{key}: UNEXPLAINED (the schemas match)"

    def _writes(self, action: str, key: str) -> bool:
        """Whether input ``key`` of ``action``'s tool says it names a file the tool
        writes (its description: "the output path", "write ... here")."""
        tool = self.live.get(self._live_keys(action)[0])
        said = _props(tool.input_schema if tool else None).get(key)
        text = said.get("description", "") if isinstance(said, dict) else ""
        return isinstance(text, str) and bool(re.search(r"\boutput\b|\bwrite", text))

    def _file_reason(self, maker: str, eater: str) -> str | None:
        """The run file ``maker``'s binding writes and ``eater``'s reads, if any: both
        bindings build its path from objects (``${run.dir}/${s}.fasta``)."""
        made = {
            t: k
            for k, v in _arguments(self.bindings[maker]).items()
            if (t := _template(v)) and self._writes(maker, k)
        }
        for key, value in _arguments(self.bindings[eater]).items():
            t = _template(value)
            if t is not None and t in made:
                return (
                    f"a file: {maker}'s {made[t]} writes {t}, {eater}'s {key} reads it"
                    " (paths made from objects in both bindings; no output is an input)"
                )
        return None

    def links(self) -> list[LinkRow]:
        deps = _dependencies(self.domain, self.bindings)
        pairs: dict[tuple[str, str], list[_Dep]] = {}
        for dep in deps:
            pair = (self._hand_tool(dep.producer), self._hand_tool(dep.consumer))
            pairs.setdefault(pair, []).append(dep)
        rows = []
        for (producer, consumer), group in pairs.items():
            first = group[0]
            pks, cks = self._live_keys(first.producer), self._live_keys(first.consumer)
            drafted = [
                f"{key} <- {prop}"
                for (pk, ck, prop, key) in self.draft_links
                if pk in pks and ck in cks
            ]
            hand = _shown(group)
            why = "" if drafted else self._missed(group, pks, cks)
            rows.append(
                LinkRow(producer, consumer, hand, bool(drafted), tuple(dict.fromkeys(drafted)), why)
            )
        return rows

    def _missed(self, group: list[_Dep], pks: list[ToolKey], cks: list[ToolKey]) -> str:
        first = group[0]
        for action in (first.producer, first.consumer):
            server = self.bindings[action].server
            if server in self.setup.not_served:
                return f"{action}: {self.setup.not_served[server]}"
        if set(pks) & set(cks):
            return "one tool: init links two different tools"
        reasons = [
            self._ref_reason(d.producer, d.consumer, *d.ref) for d in group if d.ref is not None
        ]
        if reasons:
            return "; ".join(dict.fromkeys(reasons))
        files = [self._file_reason(d.producer, d.consumer) for d in group]
        found = next((f for f in files if f), None)
        if found:
            return found
        facts = ", ".join(dict.fromkeys(d.shown_by.split(" ", 1)[1] for d in group))
        return f"state only ({facts}): no output of the one is an input of the other"

    def extras(self) -> list[ExtraRow]:
        hand_pairs = set()
        for dep in _dependencies(self.domain, self.bindings):
            for pk in self._live_keys(dep.producer):
                for ck in self._live_keys(dep.consumer):
                    hand_pairs.add((pk, ck))
        rows = []
        for pk, ck, prop, key in self.draft_links:
            if (pk, ck) in hand_pairs:
                continue
            said = []
            if prop in _required(self.live[pk].input_schema):
                said.append(f"{pk[1]}'s {prop} output repeats its own {prop} input")
            meant = _described(self.live[pk].output_schema, prop)
            wanted = _described(self.live[ck].input_schema, key)
            if meant != wanted:
                told = [f"{pk[1]} gives {meant!r}"] if meant else []
                told += [f"{ck[1]} takes {wanted!r}"] if wanted else []
                said.append(f"the schemas' descriptions: {', '.join(told)}")
            uses = [a for a in self.bindings if ck in self._live_keys(a)]
            bound = sorted(
                {
                    str(_arguments(self.bindings[a])[key])
                    for a in uses
                    if key in _arguments(self.bindings[a])
                }
            )
            if bound:
                said.append(f"the hand-written {key} is {' / '.join(bound)}")
            elif uses:
                said.append(f"the hand-written binding does not pass {key}")
            else:
                said.append(f"no hand-written action uses {ck[1]}")
            rows.append(
                ExtraRow(
                    f"{pk[0]}.{pk[1]}", f"{ck[0]}.{ck[1]}", f"{key} <- {prop}", "; ".join(said)
                )
            )
        return rows

    def schema_errors(self) -> list[str]:
        """Draft links the schemas do not show: the output and the input must have the same
        name, both be required and declare the same JSON type."""
        errors = []
        for pk, ck, prop, key in self.draft_links:
            p, c = self.live.get(pk), self.live.get(ck)
            if p is None or c is None:
                errors.append(f"{pk} -> {ck}: a tool the servers do not list")
                continue
            if prop != key:
                errors.append(f"{pk[1]}.{prop} -> {ck[1]}.{key}: names differ")
            if prop not in _required(p.output_schema) or key not in _required(c.input_schema):
                errors.append(f"{pk[1]}.{prop} -> {ck[1]}.{key}: not required on both sides")
                continue
            pt = json_type(_props(p.output_schema)[prop])
            ct = json_type(_props(c.input_schema)[key])
            if pt is None or pt != ct:
                errors.append(f"{pk[1]}.{prop} -> {ck[1]}.{key}: types {pt} / {ct}")
        return errors

    def comparison(self) -> Comparison:
        return Comparison(
            self.name,
            self.setup.how,
            self.printed,
            self.actions(),
            self.unused(),
            self.links(),
            self.extras(),
            len(self.draft_domain.actions),
            len(self.draft_links),
            [
                (f"{p[0]}.{p[1]}", f"{c[0]}.{c[1]}", f"{k} <- {o}")
                for p, c, o, k in self.draft_links
            ],
            self.schema_errors(),
        )


def compare_domain(name: str, work: Path) -> Comparison:
    """Start ``name``'s servers in ``work``, run ``plansmith init`` and ``plansmith tools
    --json`` on them and compare the draft with the shipped domain. The two commands run
    at once, each on servers of its own (``work/init``, ``work/tools``): two servers
    must not share a state folder (two ``plansmith-corpus`` indexing one database at
    once can fail on its unique paths)."""
    setups = []
    for part in ("init", "tools"):
        (work / part).mkdir(parents=True, exist_ok=True)
        setups.append(SETUPS[name](work / part))
    setup, for_tools = setups
    draft_dir = work / "init" / "draft"
    with ThreadPoolExecutor(2) as pool:
        surveyed = pool.submit(_survey, for_tools.servers_file)
        made = pool.submit(_plansmith, *init_command(setup.servers_file, draft_dir))
        live, done = surveyed.result(), made.result()
    if done.returncode != 0:
        raise RuntimeError(f"plansmith init failed ({done.returncode}): {done.stderr[-2000:]}")
    printed = done.stdout.splitlines()[0]
    return _Compare(name, setup, live, draft_dir, printed).comparison()


def compare_all(names: Iterable[str], work: Path) -> list[Comparison]:
    """``compare_domain`` for each domain, at once, in the order given."""
    wanted = list(names)
    with ThreadPoolExecutor(max(1, len(wanted))) as pool:
        futures = [pool.submit(compare_domain, n, work / n) for n in wanted]
        return [f.result() for f in futures]


def printed_counts(c: Comparison) -> tuple[int, int]:
    """The actions and links ``plansmith init`` said it drafted."""
    found = _PRINTED.search(c.init_printed)
    if not found:
        raise ValueError(f"not init's summary: {c.init_printed!r}")
    return int(found.group(1)), int(found.group(3))


# -- printing ----------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("<-", "←").replace("->", "→") or "—"


def _row(*cells: str) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def total_line(results: Sequence[Comparison]) -> str:
    """The counts of all the domains together."""
    n = {k: sum(counts_of(c)[k] for c in results) for k in counts_of(results[0])}
    return (
        f"all ({', '.join(c.domain for c in results)}): actions drafted"
        f" {n['drafted']}/{n['actions']} ({n['served']} on MCP servers), tiers equal"
        f" {n['tiers_equal']}/{n['served']}; links recovered {n['recovered']}/{n['links']},"
        f" missed {n['missed']}, extra {n['extra_links']}"
    )


def render_markdown(results: Sequence[Comparison]) -> str:
    out: list[str] = []
    for c in results:
        out += [
            f"### {c.domain}",
            "",
            f"Servers: `{c.how}`. init: {c.init_printed.split(', in ')[0]}.",
            "",
        ]
        out += [_row("action", "tool", "drafted as", "tier", "draft tier"), "|---|---|---|---|---|"]
        for a in c.actions:
            drafted = ", ".join(a.drafted_as) if a.drafted_as else f"not drafted: {a.note}"
            out.append(_row(a.action, a.tool, drafted, a.tier, a.draft_tier or ""))
        unused = ", ".join(c.unused) if c.unused else "none"
        out += ["", f"Draft tools no hand-written action uses: {unused}.", ""]
        out += [_row("producer → consumer", "hand-written", "draft link", "why missed")]
        out.append("|---|---|---|---|")
        for k in c.links:
            out.append(
                _row(
                    f"{k.producer} -> {k.consumer}",
                    "; ".join(k.hand),
                    "; ".join(k.drafted) if k.recovered else "none",
                    k.why,
                )
            )
        out.append("")
        if c.extras:
            out += [_row("extra draft link", "input ← output", "why the hand-written has none")]
            out.append("|---|---|---|")
            out += [_row(f"{e.producer} -> {e.consumer}", e.prop, e.why) for e in c.extras]
        else:
            out.append("Extra draft links: none.")
        out += ["", summary_line(c), ""]
    if len(results) > 1:
        out += [total_line(results), ""]
    return "\n".join(out)


def to_json(results: Sequence[Comparison]) -> dict[str, Any]:
    return {
        "domains": [
            {**asdict(c), "counts": counts_of(c), "summary": summary_line(c)} for c in results
        ]
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("domains", nargs="*", help=f"of {', '.join(DOMAINS)} (default: all)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--keep", type=Path, help="work in DIR and keep it (servers, drafts)")
    args = parser.parse_args(argv)
    names = list(dict.fromkeys(args.domains or DOMAINS))
    unknown = [n for n in names if n not in DOMAINS]
    if unknown:
        parser.error(f"no domain {unknown[0]!r}; the domains are: {', '.join(DOMAINS)}")
    if args.keep:
        results = compare_all(names, args.keep.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="compare-init-") as tmp:
            results = compare_all(names, Path(tmp))
    if args.json:
        print(json.dumps(to_json(results), indent=2))
    else:
        print(render_markdown(results))
    bad = [e for c in results for e in c.schema_errors]
    for error in bad:
        print(f"error: a draft link the schemas do not show: {error}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
