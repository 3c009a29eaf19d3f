"""Files for engine tests: a document domain, problems, servers and bindings in a tmp dir."""

from __future__ import annotations

from pathlib import Path

from _shared_servers import (
    INDEX,
    INDEX_BINDING,
    SUMMARISE,
    SUMMARISE_BINDING,
    action,
    binding,
    docs_domain,
    htn_problem_text,
    problem_text,
    servers_json,
)
from plansmith.engine import RunInputs

DOMAIN = docs_domain(
    SUMMARISE,
    action("summarise_alt", "exists(d), not summarised(d)", "summarised(d)", "read", cost=5),
    INDEX,
    rest="""\
tasks:
  publish:
    parameters: {d: document}
    methods:
      - name: usual
        subtasks: [summarise(d), index(d)]
      - name: fallback
        subtasks: [summarise_alt(d), index(d)]
""",
)

BINDINGS = (
    "bindings:\n"
    + SUMMARISE_BINDING
    + "    retries: 2\n    idempotent: true\n"
    + binding("summarise_alt", "work", '{name: "alt-${d}"}', '{done: "$.structured.done"}')
    + INDEX_BINDING
)


def write_inputs(
    tmp: Path, n: int = 2, bindings: str = BINDINGS, *, htn: bool = False, **env: str
) -> RunInputs:
    (tmp / "domain.yaml").write_text(DOMAIN)
    (tmp / "problem.yaml").write_text(htn_problem_text(n) if htn else problem_text(n))
    (tmp / "bindings.yaml").write_text(bindings)
    (tmp / "servers.json").write_text(servers_json(env=env, indent=2))
    return RunInputs(
        tmp / "domain.yaml", tmp / "problem.yaml", tmp / "servers.json", tmp / "bindings.yaml"
    )


def invoke(*args: str) -> tuple[int, str, str]:
    """``plansmith ARGS`` through Typer's runner: exit code, stdout, stderr."""
    from typer.testing import CliRunner

    import plansmith.cli._retry
    import plansmith.cli._run  # noqa: F401
    from plansmith.cli._app import app

    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def files(inputs: RunInputs) -> list[str]:
    """The domain, problem, ``--servers`` and ``--bindings`` arguments of ``inputs``."""
    return [
        str(inputs.domain),
        str(inputs.problem),
        "--servers",
        str(inputs.servers),
        "--bindings",
        str(inputs.bindings),
    ]


#: ``python -c CLI_MAIN ARGS`` runs ``plansmith ARGS`` with SIGINT as a terminal's
#: foreground job has it, even where the tests run with it ignored (a background job of a
#: shell without job control: its children inherit that, and the CLI keeps it ignored)
CLI_MAIN = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler);"
    " sys.argv[0] = 'plansmith'; from plansmith.cli import main; main()"
)
