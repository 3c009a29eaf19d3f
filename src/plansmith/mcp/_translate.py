"""Translating ``make_plan(request=...)`` with a model: host sampling or an OpenAI endpoint.

Sampling goes through ``Resolve(Sample)`` resolvers, so it works on 2026-07-28
connections (no push requests: the SDK turns each into an ``InputRequiredResult``
round trip) as well as on legacy ones. The first resolver asks for the goal; the
second asks again only when the first answer fails validation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mcp.server.mcpserver import Context, Sample
from mcp.types import CreateMessageResult, SamplingMessage, TextContent

from plansmith.errors import InputError, Location, PlansmithError
from plansmith.mcp._llm import (
    MAX_LLM_CALLS,
    SYSTEM_PROMPT,
    LlmGoal,
    read_answer,
    repair_prompt,
    translation_prompt,
)
from plansmith.mcp._openai import OpenAIConfig, chat
from plansmith.mcp._service import FaceService
from plansmith.mcp._types import Translation

__all__ = ["TRANSLATORS", "choose_translator", "sample", "reply_text", "check_answer", "via_openai"]

TRANSLATORS = ("auto", "offline", "sampling", "openai")


def choose_translator(
    translator: str, request: str | None, ctx: Context, openai: OpenAIConfig | None
) -> str | None:
    """The translator a call uses: None without a request; ``auto`` prefers an
    OpenAI endpoint when configured, then host sampling, then the offline matcher."""
    if request is None:
        return None
    caps = ctx.client_capabilities
    can_sample = caps is not None and caps.sampling is not None
    if translator == "sampling" and not can_sample:
        raise InputError(
            "translator 'sampling' needs a client that offers sampling",
            location=Location(argument="translator"),
            hint="use translator='offline' (or 'openai' with PLANSMITH_LLM_BASE_URL set)",
        )
    if translator != "auto":
        return translator
    if openai is not None:
        return "openai"
    return "sampling" if can_sample else "offline"


def sample(prompt: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
    return Sample([message], max_tokens=512, system_prompt=SYSTEM_PROMPT, temperature=0)


def reply_text(reply: CreateMessageResult | None) -> str:
    content = reply.content if reply is not None else None
    return content.text if isinstance(content, TextContent) else ""


@dataclass(frozen=True, slots=True)
class Checked:
    goal: LlmGoal | None
    error: str | None


def check_answer(
    service: FaceService,
    domain: str,
    text: str,
    objects: Mapping[str, str] | None,
    init: Sequence[str] | None,
) -> Checked:
    """Read and validate a model's answer; the error text when it is refused."""
    try:
        goal = read_answer(text)
        if not goal.none:  # "no goal, because ...": nothing to validate
            service.validate_goal(
                domain, goal=goal.goal, tasks=goal.tasks, objects=objects, init=init
            )
    except PlansmithError as error:
        return Checked(None, f"{type(error).__name__}: {error.message}")
    return Checked(goal, None)


def translation(source: str, request: str, goal: LlmGoal, calls: int) -> Translation:
    """The translation of an accepted answer; one with neither goal nor tasks (the
    model said the domain has none for the request) carries the model's reason."""
    reason = f"the model found no goal of this domain for the request: {goal.reason}"
    return Translation(
        source, request, goal.goal, goal.tasks, llm_calls=calls, reason=reason if goal.none else ""
    )


async def via_openai(
    service: FaceService,
    config: OpenAIConfig,
    domain: str,
    request: str,
    *,
    objects: Mapping[str, str] | None,
    init: Sequence[str] | None,
) -> Translation:
    """Ask the endpoint, and once more with the refusal if the first answer is invalid.
    A translation with neither goal nor tasks is the model's "no goal" (its reason)."""
    info = service.describe_domain(domain)
    prompt = translation_prompt(info, request)
    error = "no answer"
    for call in range(1, MAX_LLM_CALLS + 1):
        text = await chat(config, SYSTEM_PROMPT, prompt)
        checked = check_answer(service, domain, text, objects, init)
        if checked.goal is not None:
            return translation("openai", request, checked.goal, call)
        error = checked.error or error
        prompt = repair_prompt(info, request, text, error)
    raise InputError(
        f"the model's goal was refused twice: {error}",
        hint="rephrase the request, or pass goal=[...] yourself",
    )
