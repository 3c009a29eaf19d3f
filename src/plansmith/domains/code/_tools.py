"""The tool catalogue: each tool's signature (its JSON Schema), description and tier metadata.

The bodies are thin: they take the session the gate set and call the one
module that does the work, in a worker thread for file and git work.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from plansmith.domains.code import _results as r
from plansmith.domains.code import _results_plan as rp
from plansmith.domains.code._config import ServerConfig
from plansmith.domains.code._deps import get_dependencies as deps_tool
from plansmith.domains.code._diagnose import parse_failures as failures_tool
from plansmith.domains.code._diagnose import report_diagnosis as report_tool
from plansmith.domains.code._errors import RefusedError
from plansmith.domains.code._gate import current_session
from plansmith.domains.code._patch import PATCH_NAME, SHA256
from plansmith.domains.code._patch import apply_patch as patch_tool
from plansmith.domains.code._symbols import SYMBOL_NAME
from plansmith.domains.code._symbols import find_symbol as symbol_tool
from plansmith.domains.code._tiers import TOOL_TIERS, Tier
from plansmith.domains.code._tools_exec import SELECTOR, check_selectors, run_configured
from plansmith.domains.code._tools_git import BRANCH, REVISION
from plansmith.domains.code._tools_git import commit_changes as commit_tool
from plansmith.domains.code._tools_git import create_branch as branch_tool
from plansmith.domains.code._tools_git import get_diff as diff_tool
from plansmith.domains.code._tools_read import get_build_logs as logs_tool
from plansmith.domains.code._tools_read import list_directory as list_tool
from plansmith.domains.code._tools_read import read_file as read_tool
from plansmith.domains.code._tools_read import search_in_files as search_tool
from plansmith.domains.code._tools_write import edit_file as edit_tool
from plansmith.domains.code._tools_write import write_file as write_tool

__all__ = ["register_tools"]

T = TypeVar("T")

FilePath = Annotated[
    str, Field(min_length=1, max_length=4096, description="relative to the repository root")
]
Dir = Annotated[
    str, Field(min_length=1, max_length=4096, description="a folder or file; '.' is the root")
]
Revision = Annotated[
    str, Field(pattern=REVISION, max_length=220, description="branch, tag, commit, HEAD~N")
]
Paths = Annotated[list[FilePath] | None, Field(max_length=200, description="only these paths")]
Selectors = Annotated[
    list[Annotated[str, Field(pattern=SELECTOR, max_length=600)]],
    Field(max_length=50, description="test ids to run (none: the whole suite)"),
]
LogId = Annotated[str | None, Field(pattern=r"^(test|build)-[0-9]{1,6}$")]
Pattern = Annotated[
    str, Field(min_length=1, max_length=200, description="text, or a regex if regex=true")
]
Symbol = Annotated[
    str, Field(pattern=SYMBOL_NAME, max_length=200, description="name or Class.method")
]


async def _thread(fn: Callable[[], T]) -> T:
    return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)


def _annotations(tool: str) -> ToolAnnotations:
    tier = TOOL_TIERS[tool]
    return ToolAnnotations(
        read_only_hint=tier is Tier.READ,
        destructive_hint=tool in {"write_file", "edit_file"},
        idempotent_hint=tier is Tier.READ,
        open_world_hint=False,
    )


def register_tools(server: MCPServer[Any], config: ServerConfig) -> None:
    """Register all 16 tools on ``server`` (the gate decides which a call may use)."""

    def tool(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        meta = {"io.plansmith/tier": str(TOOL_TIERS[name])}
        return server.tool(name=name, annotations=_annotations(name), meta=meta)

    @tool("read_file")
    async def read_file(
        path: FilePath, offset: r.Offset = 0, limit: r.Limit = r.MAX_PAGE
    ) -> r.ReadFileResult:
        """Read a text file, at most 200 lines per call (page with offset); secrets redacted."""
        return await _thread(partial(read_tool, current_session().sandbox, path, offset, limit))

    @tool("list_directory")
    async def list_directory(
        path: Dir = ".", offset: r.Offset = 0, limit: r.Limit = r.MAX_PAGE
    ) -> r.ListDirectoryResult:
        """List a folder of the repository (sorted; .git hidden; symlinks shown, not followed)."""
        return await _thread(partial(list_tool, current_session().sandbox, path, offset, limit))

    @tool("search_in_files")
    async def search_in_files(
        *,
        pattern: Pattern,
        path: Dir = ".",
        glob: Annotated[str | None, Field(max_length=200, description="e.g. *.py")] = None,
        regex: bool = False,
        case_sensitive: bool = True,
        offset: r.Offset = 0,
        limit: r.Limit = r.MAX_PAGE,
    ) -> r.SearchResult:
        """Find lines matching a text or regex in the repository's text files."""
        search = partial(
            search_tool,
            current_session().sandbox,
            pattern=pattern,
            path=path,
            glob=glob,
            regex=regex,
            case_sensitive=case_sensitive,
            offset=offset,
            limit=limit,
        )
        return await _thread(search)

    @tool("find_symbol")
    async def find_symbol(
        name: Symbol, path: Dir = ".", offset: r.Offset = 0, limit: r.Limit = r.MAX_PAGE
    ) -> r.SymbolResult:
        """Where a class, function, method or variable is defined (Python: ast; else patterns)."""
        box = current_session().sandbox
        return await _thread(partial(symbol_tool, box, name, path, offset, limit))

    @tool("get_dependencies")
    async def get_dependencies() -> r.DependenciesResult:
        """The project's declared dependencies (pyproject.toml, setup.cfg, requirements*.txt)."""
        return await _thread(partial(deps_tool, current_session().sandbox))

    @tool("get_diff")
    async def get_diff(
        base: Revision | None = None,
        paths: Paths = None,
        offset: r.Offset = 0,
        limit: r.Limit = r.MAX_PAGE,
    ) -> r.DiffResult:
        """The session's changes against a revision (default HEAD), paged; lists untracked files."""
        box = current_session().sandbox
        return await _thread(partial(diff_tool, box, base, paths, offset, limit))

    @tool("get_build_logs")
    async def get_build_logs(
        log_id: LogId = None, offset: r.Offset = 0, limit: r.Limit = r.MAX_PAGE
    ) -> r.BuildLogsResult:
        """The output of this session's run_tests / run_build calls (latest by default), paged."""
        return await _thread(partial(logs_tool, current_session(), log_id, offset, limit))

    @tool("write_file")
    async def write_file(
        path: FilePath, content: Annotated[str, Field(max_length=1024 * 1024)]
    ) -> r.WriteResult:
        """Create or replace a text file in the session's worktree."""
        return await _thread(partial(write_tool, current_session().sandbox, path, content))

    @tool("edit_file")
    async def edit_file(
        path: FilePath,
        old_string: Annotated[str, Field(min_length=1, max_length=200_000)],
        new_string: Annotated[str, Field(max_length=1024 * 1024)],
        replace_all: bool = False,
    ) -> r.EditResult:
        """Replace exact text; refused if it is missing or not unique (unless replace_all)."""
        box = current_session().sandbox
        return await _thread(partial(edit_tool, box, path, old_string, new_string, replace_all))

    @tool("create_branch")
    async def create_branch(
        name: Annotated[str, Field(pattern=BRANCH, max_length=200)], start_point: Revision = "HEAD"
    ) -> r.BranchResult:
        """Create a git branch at start_point and switch the session's worktree to it."""
        return await _thread(partial(branch_tool, current_session().sandbox, name, start_point))

    @tool("commit_changes")
    async def commit_changes(
        message: Annotated[str, Field(min_length=1, max_length=5000)], paths: Paths = None
    ) -> r.CommitResult:
        """Stage the changes (all, or the given paths) and commit them on the current branch."""
        box = current_session().sandbox
        return await _thread(partial(commit_tool, box, message, paths, config.git_author))

    @tool("run_tests")
    async def run_tests(
        selectors: Selectors | None = None,
        require_pass: Annotated[
            bool, Field(description="fail with tests_failed unless every test passes")
        ] = False,
    ) -> r.RunResult:
        """Run the project's configured test command, optionally on some test ids."""
        session = current_session()
        chosen = await _thread(partial(check_selectors, session, selectors or []))
        result = await run_configured(session, config.commands, "test", chosen)
        if require_pass and not result.passed:
            raise RefusedError(
                "tests_failed",
                f"{len(result.failures)} test(s) failed (exit {result.exit_code}): "
                + ", ".join(result.failures[:10]),
                fix=f"get_build_logs(log_id={result.log_id!r}) shows the output",
            )
        return result

    @tool("parse_failures")
    async def parse_failures(log_id: LogId = None) -> rp.FailuresResult:
        """Parse a test log's failures and rank the project symbols that may cause them."""
        return await _thread(partial(failures_tool, current_session(), log_id))

    @tool("report_diagnosis")
    async def report_diagnosis(
        *,
        failures: Annotated[list[rp.FailureInfo], Field(max_length=r.MAX_PAGE)],
        suspects: Annotated[list[rp.Suspect], Field(max_length=r.MAX_PAGE)],
        symbol: Symbol,
        path: FilePath,
        line: Annotated[int, Field(ge=1)],
        first_line: Annotated[int, Field(ge=1)],
        code: Annotated[list[Annotated[str, Field(max_length=20_000)]], Field(max_length=200)],
    ) -> rp.DiagnosisResult:
        """Write the diagnosis (Markdown) from the failures, suspects and code found before."""
        return report_tool(
            failures=failures,
            suspects=suspects,
            symbol=symbol,
            path=path,
            line=line,
            first_line=first_line,
            code=code,
        )

    @tool("apply_patch")
    async def apply_patch(
        name: Annotated[str, Field(pattern=PATCH_NAME, description="NAME of PATCH_DIR/NAME.patch")],
        sha256: Annotated[str, Field(pattern=SHA256, description="the approved patch's SHA-256")],
    ) -> rp.PatchResult:
        """Apply an approved patch from the server's patch folder, if its SHA-256 matches."""
        session = current_session()
        body = partial(patch_tool, session, config.patch_dir, name, sha256, config.git_author)
        return await _thread(body)

    @tool("run_build")
    async def run_build() -> r.RunResult:
        """Run the project's configured build command (it takes no arguments)."""
        return await run_configured(current_session(), config.commands, "build", [])
