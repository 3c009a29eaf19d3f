"""The code domain's request input: ``repo``, the git repository a request names.

"diagnose the failing tests in ~/src/toolz" or ``inputs={"repo": "~/src/toolz"}``: the
folder must be a git repository whose ``plansmith-code.toml`` names its test command
(the server runs only configured commands). It becomes the suite object ``repo`` of the
problem (``configured(repo)``), and the run's ``plansmith-code`` server is started on
it with the execute tier, its worktrees and state under the run home: no environment
variable (``PLANSMITH_CODE_CONFIG``) is needed. The plan still needs approval before it
runs anything: it runs the tests.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from plansmith.domains.code._config import PROJECT_FILE, load_config
from plansmith.domains.requests import InputSpec, PreparedRequest
from plansmith.errors import InputError, Location

__all__ = ["CODE_INPUTS", "CodeInputs"]

_NAME = "repo"
_EXAMPLE_TOML = '[commands]\ntest = ["python", "-m", "pytest", "-q"]'


def _check_repo(name: str, path: Path) -> Path:
    """The repository's resolved path; an InputError naming the input otherwise."""
    where = Location(str(path))
    if not path.is_dir():
        raise InputError(
            f"input {name}: no folder {path}",
            location=where,
            hint="name the repository's folder (relative to the server's folder)",
        )
    root = path.resolve()
    if not (root / ".git").exists():
        raise InputError(
            f"input {name}: {root} is not a git repository",
            location=where,
            hint="name the repository's top folder (the one holding .git)",
        )
    try:
        config = load_config(root)
    except InputError as error:
        raise InputError(
            f"input {name}: {error.message}", location=error.location, hint=error.hint
        ) from None
    if config.commands.test is None:
        raise InputError(
            f"input {name}: {root / PROJECT_FILE} names no test command",
            location=Location(str(root / PROJECT_FILE)),
            hint=f"add {PROJECT_FILE} with:\n{_EXAMPLE_TOML}",
        )
    return root


class CodeInputs:
    """``repo``, the repository the code domain's goals work on."""

    makes_servers: bool = True
    inputs: tuple[InputSpec, ...] = (
        InputSpec(
            _NAME,
            f"the git repository, a folder whose {PROJECT_FILE} names its test command",
            ("folder",),
            ("diagnosis", "proven_patch"),
            "suite",
            "folder",
        ),
    )

    def assign(self, paths: Sequence[Path]) -> dict[str, Path]:
        folders = [p for p in paths if p.is_dir()]
        if len(folders) > 1:
            listed = ", ".join(str(p) for p in folders)
            raise InputError(
                f"the request names {len(folders)} folders ({listed}); the code domain takes one",
                hint="name one repository",
            )
        return {_NAME: folders[0]} if folders else {}

    def needed(self, goal: Sequence[str]) -> tuple[str, ...]:
        return (_NAME,) if any(atom.strip().startswith("diagnosed(") for atom in goal) else ()

    def values_in_text(self, text: str) -> dict[str, str]:
        return {}  # every input is a file or folder

    def prepare(
        self, given: Mapping[str, Path], workdir: Path, values: Mapping[str, str]
    ) -> PreparedRequest:
        unknown = sorted((set(given) | set(values)) - {_NAME})
        if unknown:
            raise InputError(
                f"the code domain has no input {unknown[0]!r}", hint=f"its input: {_NAME}"
            )
        root = _check_repo(_NAME, given[_NAME])
        digest = hashlib.sha256(str(root).encode()).hexdigest()[:16]
        folder = workdir / "code-servers" / digest  # outside the repository
        folder.mkdir(parents=True, exist_ok=True)
        config = {
            "repo": str(root),
            "tier": "execute",
            "worktree_root": str(folder / "worktrees"),
            "state_dir": str(folder / "state"),
        }
        server_config = folder / "code-server.json"
        text = json.dumps(config, indent=2) + "\n"
        if not server_config.is_file() or server_config.read_text(encoding="utf-8") != text:
            server_config.write_text(text, encoding="utf-8")
        args = ["-m", "plansmith.domains.code.server", "--config", str(server_config)]
        servers = {"mcpServers": {"code": {"command": sys.executable, "args": args}}}
        return PreparedRequest(
            {_NAME: "suite"}, (f"configured({_NAME})",), servers, {_NAME: str(root)}
        )


CODE_INPUTS = CodeInputs()
