"""``draft_patch``: a model writes the patch for a diagnosed failure, outside any plan.

The host calls ``draft_patch(run_id)`` with the id of a finished diagnose run. The
face asks a model for a unified diff, through the host's sampling (``Resolve(Sample)``,
so it works on 2026-07-28 and legacy connections) or an OpenAI-compatible endpoint,
exactly as ``make_plan`` does for translation. The service checks the answer (a
well-formed diff, only files inside the project, applies with ``git apply --check``,
no binary or mode change, a size limit); a refused answer is sent back once with
the refusal, so a draft costs at most 2 LLM calls. The accepted patch is stored in
the code server's patch folder, and the result says how to make the patch plan,
whose hash (it covers the patch's SHA-256) a person must approve before it runs.

The model's text is data: it ends up as a file that only an approved plan applies.
"""

# No `from __future__ import annotations`: the SDK evaluates the closures' annotations.

import functools
from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer, Resolve, Sample
from mcp.types import CreateMessageResult, SamplingMessage, TextContent

from plansmith.domains.code.desk import DraftRequest, PatchDesk, PatchDraft
from plansmith.errors import InputError, Location, PlansmithError
from plansmith.mcp._hints import acts
from plansmith.mcp._llm import MAX_LLM_CALLS
from plansmith.mcp._openai import OpenAIConfig, chat
from plansmith.mcp._owner import Owners, tool_error
from plansmith.mcp._translate import reply_text

__all__ = ["add_patch_tools"]

Drafter = Literal["auto", "sampling", "openai"]
Reply = CreateMessageResult | None
MAX_DRAFT_TOKENS = 4096


def _sample(request: DraftRequest) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=request.prompt))
    return Sample(
        [message], max_tokens=MAX_DRAFT_TOKENS, system_prompt=request.system, temperature=0
    )


def _drafter(drafter: str, ctx: Context, openai: OpenAIConfig | None) -> str:
    caps = ctx.client_capabilities
    can_sample = caps is not None and caps.sampling is not None
    if drafter == "openai" and openai is None:
        raise InputError(
            "drafter 'openai' needs PLANSMITH_LLM_BASE_URL and PLANSMITH_LLM_MODEL",
            location=Location(argument="drafter"),
            hint="set them, or use drafter='sampling' from a host that offers sampling",
        )
    if drafter == "sampling" and not can_sample:
        raise InputError(
            "drafter 'sampling' needs a client that offers sampling",
            location=Location(argument="drafter"),
            hint="use drafter='openai' with PLANSMITH_LLM_BASE_URL set, or write the patch "
            "yourself into the code server's patch folder",
        )
    if drafter != "auto":
        return drafter
    if openai is not None:
        return "openai"
    if can_sample:
        return "sampling"
    raise InputError(
        "draft_patch needs a model: a client that offers sampling, or an endpoint",
        location=Location(argument="drafter"),
        hint="set PLANSMITH_LLM_BASE_URL and PLANSMITH_LLM_MODEL, or write the patch yourself "
        "into the code server's patch folder and make the patch plan",
    )


def _refused(errors: list[str]) -> InputError:
    return InputError(
        f"the model's patch was refused: {'; '.join(errors) or 'no answer'}; nothing was written",
        hint="draft again with a note (note='...'), or write the patch yourself",
    )


def add_patch_tools(
    server: MCPServer,
    patches: PatchDesk,
    openai: OpenAIConfig | None,
    owners: Owners | None = None,
) -> None:
    """Add ``draft_patch`` to the face; ``owners`` tells who a call is (default: nothing
    shared, no sessions issued)."""
    who = owners or Owners()

    def guarded(work: Callable[[], Any]) -> Any:
        try:
            return work()
        except PlansmithError as error:
            raise tool_error(error) from None

    async def check(run_id: str, answer: str, owner: str) -> str | None:
        return await anyio.to_thread.run_sync(
            functools.partial(patches.check_draft, run_id, answer, owner=owner)
        )

    async def first_draft(
        run_id: str, ctx: Context, note: str | None = None, drafter: str = "auto"
    ) -> Sample | None:
        owner = guarded(lambda: who.owner(ctx.headers, ctx.protocol_version))
        if guarded(lambda: _drafter(drafter, ctx, openai)) != "sampling":
            return None
        return _sample(guarded(lambda: patches.draft_request(run_id, note=note, owner=owner)))

    async def second_draft(
        run_id: str,
        ctx: Context,
        first: Annotated[Reply, Resolve(first_draft)],
        note: str | None = None,
    ) -> Sample | None:
        if first is None:
            return None
        owner = guarded(lambda: who.owner(ctx.headers, ctx.protocol_version))
        answer = reply_text(first)
        error = await check(run_id, answer, owner)
        if error is None:
            return None
        request = guarded(
            lambda: patches.draft_request(run_id, note=note, refused=(answer, error), owner=owner)
        )
        return _sample(request)

    async def via_openai(
        config: OpenAIConfig, run_id: str, note: str | None, branch: str | None, owner: str
    ) -> PatchDraft:
        errors: list[str] = []
        refused: tuple[str, str] | None = None
        for call in range(1, MAX_LLM_CALLS + 1):
            request = patches.draft_request(run_id, note=note, refused=refused, owner=owner)
            answer = await chat(config, request.system, request.prompt)
            error = await check(run_id, answer, owner)
            if error is None:
                return await save(
                    run_id, answer, source="openai", calls=call, branch=branch, owner=owner
                )
            errors.append(error)
            refused = (answer, error)
        raise _refused(errors)

    async def save(
        run_id: str, answer: str, *, source: str, calls: int, branch: str | None, owner: str
    ) -> PatchDraft:
        return await anyio.to_thread.run_sync(
            lambda: patches.save_draft(
                run_id, answer, source=source, llm_calls=calls, branch=branch, owner=owner
            )
        )

    @server.tool(**acts("Draft a patch", destructive=False, idempotent=False, open_world=True))
    async def draft_patch(  # noqa: PLR0917 - the SDK passes arguments by keyword
        run_id: str,
        ctx: Context,
        first: Annotated[Reply, Resolve(first_draft)],
        second: Annotated[Reply, Resolve(second_draft)],
        note: str | None = None,
        branch: str | None = None,
        drafter: Drafter = "auto",
    ) -> PatchDraft:
        """Ask a model for a patch that fixes a finished diagnose run (run_id).

        The answer is checked (a unified diff of text files inside the project that
        applies cleanly to HEAD) and stored in the code server's patch folder. Nothing
        runs: make the patch plan with the returned tasks/objects/init, show it to the
        user, and approve its hash. note: extra guidance for the model; branch: the
        branch to commit on (default fix-FUNCTION-HASH); drafter: sampling or openai.
        At most 2 LLM calls (a refused answer is sent back once).
        """
        try:
            owner = who.owner(ctx.headers, ctx.protocol_version)
            source = _drafter(drafter, ctx, openai)
            if source == "openai":
                assert openai is not None  # _drafter refuses openai without a config
                return await via_openai(openai, run_id, note, branch, owner)
            errors: list[str] = []
            for calls, reply in enumerate((first, second), start=1):
                if reply is None:
                    break
                answer = reply_text(reply)
                error = await check(run_id, answer, owner)
                if error is None:
                    return await save(
                        run_id, answer, source="sampling", calls=calls, branch=branch, owner=owner
                    )
                errors.append(error)
            raise _refused(errors)
        except PlansmithError as error:
            raise tool_error(error) from None
