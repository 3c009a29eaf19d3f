"""Start ``plansmith-lab`` from its own venv over stdio, with the main venv's mcp 2.x client."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from mcp import Client, StdioServerParameters

from plansmith.domains.lab import LAB_DIR, SERVER_SCRIPT
from plansmith.domains.lab._labenv import find_lab_python

ROOT = Path(__file__).resolve().parents[3]
# $PLANSMITH_LAB_PYTHON, else .venv-lab of this checkout (the same lookup as plansmith's)
LAB_PYTHON = find_lab_python()[0]
KEY = "io.plansmith/idempotency-key"


def _skip_reason() -> str | None:
    if not LAB_PYTHON.exists():
        return f"{LAB_PYTHON} is missing: build the lab venv with `make lab-venv`"
    probe = (
        "import importlib.util as u, sys; "
        "sys.exit(0 if u.find_spec('opentrons') and u.find_spec('mcp') else 1)"
    )
    done = subprocess.run(
        [str(LAB_PYTHON), "-c", probe], capture_output=True, timeout=60, check=False
    )
    if done.returncode != 0:
        return "the lab venv cannot find opentrons or mcp: rebuild it with `make lab-venv`"
    return None


SKIP_REASON = _skip_reason()


def labtools() -> ModuleType:
    """The server's tool list (standard library only, so the main venv can read it)."""
    spec = importlib.util.spec_from_file_location("labtools", LAB_DIR / "labserver" / "labtools.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("labtools", module)
    spec.loader.exec_module(module)
    return module


def server_params(
    role: str = "all", robot: Path | None = None, env: dict[str, str] | None = None
) -> StdioServerParameters:
    args = [str(SERVER_SCRIPT), "--role", role]
    if robot is not None:
        args += ["--robot", str(robot)]
    return StdioServerParameters(command=str(LAB_PYTHON), args=args, cwd=str(ROOT), env=env)


@asynccontextmanager
async def lab_client(
    role: str = "all", robot: Path | None = None, env: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """A client of the lab server; ``env``: extra environment variables for it."""
    async with Client(server_params(role, robot, env), read_timeout_seconds=120) as client:
        await client.list_tools()
        yield client


async def call(client: Client, tool: str, key: str | None = None, **arguments: Any) -> Any:
    """Call ``tool``; its JSON result, or AssertionError with the message of a refusal."""
    meta = {KEY: key} if key else None
    result = await client.call_tool(tool, arguments, meta=meta)
    text = result.content[0].text if result.content else ""
    assert not result.is_error, f"{tool} refused: {text}"
    return json.loads(text)


async def refusal(client: Client, tool: str, **arguments: Any) -> str:
    """Call ``tool`` expecting an ``isError`` result; its message."""
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text if result.content else ""
    assert result.is_error, f"{tool} was expected to fail, gave {text}"
    return text
