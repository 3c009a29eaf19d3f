"""Whether a domain folder can run here: if not, why, and the command that fixes it.

One rule for every face (``plansmith mcp``'s ``list_domains``, the web catalog and
``plansmith domains``). A folder is ready when it has ``servers.json`` and
``bindings.yaml``, both load (every ``${env:NAME}`` they use is set), and every stdio
server's command is installed (for ``plansmith-lab``: the Opentrons simulator's Python
exists). HTTP servers are reached only when a run binds, so they are not checked here.
Programs a server uses only where installed (BLAST+, MAFFT, FastTree for bio) are
``notes``, not reasons.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from plansmith.binding import load_bindings
from plansmith.errors import PlansmithError
from plansmith.servers import StdioServer, load_servers

__all__ = ["Readiness", "readiness_of", "optional_notes", "GTPYHOP_READINESS", "lab_python_missing"]


@dataclass(frozen=True, slots=True)
class Readiness:
    """``ready``, else ``reason`` (one sentence) and ``fix`` (what to run or set)."""

    ready: bool
    reason: str = ""
    fix: str = ""
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "ready": self.ready,
            "reason": self.reason,
            "fix": self.fix,
            "notes": list(self.notes),
        }


READY = Readiness(True)

GTPYHOP_READINESS = Readiness(
    False,
    "plans only: a GTPyhop folder's actions are Python functions, not tools",
    "plan it with `plansmith plan FOLDER --problem NAME`; to run it, write a domain.yaml "
    "with bindings.yaml and servers.json (docs/bindings.md)",
)

_ENV = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")

_BIO_ENV = (
    "set PLANSMITH_BIO_RUN_ROOT to the folder the bio server may write to and "
    "PLANSMITH_BIO_INPUTS to a JSON object of input files "
    '(e.g. \'{"query": "data/gene.fasta"}\'); `plansmith bio` sets both (docs/bio.md)'
)

#: what sets a variable a shipped servers.json reads
_ENV_FIXES = {
    "PLANSMITH_CODE_CONFIG": "set PLANSMITH_CODE_CONFIG to a code-server config that names "
    "the repository (docs/code-tools.md), e.g. `export PLANSMITH_CODE_CONFIG=code.yaml`",
    "PLANSMITH_BIO_RUN_ROOT": _BIO_ENV,
    "PLANSMITH_BIO_INPUTS": _BIO_ENV,
    "NOTES_WORKDIR": "set NOTES_WORKDIR to a folder holding notes/ and a git repository "
    "repo/ (examples/notes-to-git/README.md)",
}

#: how to get a server program that is not installed
_COMMAND_FIXES = {
    "npx": "install Node.js and npm (Debian: `apt-get install -y nodejs npm`)",
    "node": "install Node.js (Debian: `apt-get install -y nodejs`)",
    "uvx": "`pip install uv`",
    "docker": "install Docker, or run the server another way",
}

#: folders whose servers are made by a face, not read from a servers.json
_NO_SERVERS_FIXES = {
    "research": "serve it with `plansmith mcp --research-source DIR` (the research_* tools) "
    "or run `plansmith research QUESTION --source DIR`: its servers are made from the "
    "folders you give (docs/research.md)",
}

#: programs a server uses where installed, by the server's command
_OPTIONAL = {
    "plansmith-bio": (
        ("blastn", "BLAST+ (`apt-get install -y ncbi-blast+`)"),
        ("mafft", "MAFFT (`apt-get install -y mafft`)"),
        ("fasttree", "FastTree (`apt-get install -y fasttree`)"),
    ),
}


def _program(command: str, env: Mapping[str, str]) -> str | None:
    """The program a stdio server's command names (as the pool finds it), or None."""
    if os.sep in command:
        return command if os.access(command, os.X_OK) else None
    found = shutil.which(command, path=env.get("PATH") or os.environ.get("PATH"))
    if found:
        return found
    beside = os.path.join(os.path.dirname(sys.executable), command)
    return beside if os.path.isfile(beside) and os.access(beside, os.X_OK) else None


def lab_python_missing() -> Readiness | None:
    """Why the Opentrons simulator cannot run here (its venv is missing), or None."""
    from plansmith.domains.lab import find_lab_python  # noqa: PLC0415 - only for plansmith-lab

    python, _source = find_lab_python()
    if python.exists():
        return None
    return Readiness(
        False,
        f"the Opentrons simulator's Python is missing ({python})",
        "run `make lab-venv` in a checkout, or `plansmith demo` (it builds the simulator's "
        "venv), or set PLANSMITH_LAB_PYTHON to a Python with opentrons and mcp (docs/lab.md)",
    )


def _unset(text: str, env: Mapping[str, str]) -> Readiness | None:
    missing = sorted({name for name in _ENV.findall(text) if name not in env})
    if not missing:
        return None
    names = " and ".join(f"${n}" for n in missing)
    fix = "; ".join(dict.fromkeys(_ENV_FIXES.get(n, f"set {n}") for n in missing))
    verb = "is" if len(missing) == 1 else "are"
    return Readiness(False, f"servers.json needs {names}, which {verb} not set", fix)


def _server_problem(server: StdioServer, env: Mapping[str, str]) -> Readiness | None:
    if _program(server.command, env) is None:
        fix = _COMMAND_FIXES.get(
            Path(server.command).name,
            f"install {server.command!r}, or give its full path as the server's command",
        )
        return Readiness(
            False, f"server {server.name!r}: the command {server.command!r} is not installed", fix
        )
    if Path(server.command).name == "plansmith-lab":
        return lab_python_missing()
    return None


def _notes(servers: tuple[StdioServer, ...], env: Mapping[str, str]) -> tuple[str, ...]:
    notes: list[str] = []
    for server in servers:
        for program, what in _OPTIONAL.get(Path(server.command).name, ()):
            if _program(program, env) is None:
                notes.append(f"{what} is not installed: the steps that need it fail")
    return tuple(dict.fromkeys(notes))


def optional_notes(servers: Path, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The notes of the programs ``servers``' stdio servers use where installed (read
    without expanding ``${env:...}``: only the commands matter)."""
    env = os.environ if env is None else env
    try:
        document = json.loads(servers.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    entries = document.get("mcpServers", {}) if isinstance(document, dict) else {}
    commands = [e.get("command") for e in entries.values() if isinstance(e, dict)]
    stdio = tuple(
        StdioServer(name, c)
        for name, c in zip(entries, commands, strict=True)
        if isinstance(c, str)
    )
    return _notes(stdio, env)


def _missing_files(name: str, servers: Path | None, bindings: Path | None) -> Readiness:
    missing = " and ".join(
        f for f, p in (("servers.json", servers), ("bindings.yaml", bindings)) if p is None
    )
    fix = _NO_SERVERS_FIXES.get(name) or (
        "add servers.json (the mcpServers of its tools) and bindings.yaml (an action to a "
        "tool each) beside its domain file (docs/bindings.md); `plansmith plan` plans it as it is"
    )
    return Readiness(False, f"plans only: the folder has no {missing}", fix)


def readiness_of(
    name: str,
    servers: Path | None,
    bindings: Path | None,
    env: Mapping[str, str] | None = None,
) -> Readiness:
    """Can the domain folder ``name``, with these servers and bindings files, run here?"""
    env = os.environ if env is None else env
    if servers is None or bindings is None:
        return _missing_files(name, servers, bindings)
    try:
        unset = _unset(servers.read_text(encoding="utf-8", errors="replace"), env)
        if unset is not None:
            return unset
        config = load_servers(servers, env)
        load_bindings(bindings)
    except (OSError, PlansmithError) as error:
        hint = getattr(error, "hint", None) or "fix the file it names"
        return Readiness(False, str(error), hint)
    stdio = tuple(s for s in config.servers if isinstance(s, StdioServer))
    for server in stdio:
        problem = _server_problem(server, env)
        if problem is not None:
            return problem
    return Readiness(True, notes=_notes(stdio, env))
