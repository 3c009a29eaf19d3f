"""An OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp) as translator.

Configured by environment: ``PLANSMITH_LLM_BASE_URL`` (e.g. ``http://127.0.0.1:11434/v1``
for Ollama), ``PLANSMITH_LLM_MODEL`` and, optionally, ``PLANSMITH_LLM_API_KEY``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx2

from plansmith.errors import ExecutionError, InputError, Location

__all__ = ["OpenAIConfig", "openai_config", "chat", "openai_model"]


@dataclass(frozen=True, slots=True)
class OpenAIConfig:
    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 60.0


def openai_config(env: Mapping[str, str]) -> OpenAIConfig | None:
    """The endpoint the environment names, or None when ``PLANSMITH_LLM_BASE_URL`` is unset."""
    base = env.get("PLANSMITH_LLM_BASE_URL")
    if not base:
        return None
    model = env.get("PLANSMITH_LLM_MODEL")
    if not model:
        raise InputError(
            "PLANSMITH_LLM_BASE_URL is set but PLANSMITH_LLM_MODEL is not",
            location=Location("env:PLANSMITH_LLM_MODEL"),
            hint="export PLANSMITH_LLM_MODEL=llama3.1 (or the model your endpoint serves)",
        )
    return OpenAIConfig(base.rstrip("/"), model, env.get("PLANSMITH_LLM_API_KEY") or None)


def _content(data: Any) -> str:
    try:
        text = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        text = None
    if not isinstance(text, str):
        raise ExecutionError(
            "the chat endpoint's answer has no choices[0].message.content",
            hint="check that PLANSMITH_LLM_BASE_URL points at an OpenAI-compatible /v1 API",
        )
    return text


async def chat(config: OpenAIConfig, system: str, user: str) -> str:
    """One chat completion; the answer's text."""
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    body = {
        "model": config.model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "temperature": 0,
    }
    url = f"{config.base_url}/chat/completions"
    try:
        async with httpx2.AsyncClient(timeout=config.timeout_s) as client:
            response = await client.post(url, json=body, headers=headers)
    except httpx2.HTTPError as error:
        raise ExecutionError(
            f"cannot reach the chat endpoint {url}: {error}",
            hint="start the endpoint (e.g. `ollama serve`) or unset PLANSMITH_LLM_BASE_URL",
        ) from None
    if response.status_code != 200:
        raise ExecutionError(
            f"the chat endpoint {url} answered HTTP {response.status_code}",
            hint="check PLANSMITH_LLM_MODEL and PLANSMITH_LLM_API_KEY",
        )
    try:
        data = response.json()
    except ValueError:
        data = None
    return _content(data)


def openai_model(config: OpenAIConfig) -> Callable[[str, str], Awaitable[str]]:
    """The endpoint as a model call (system prompt, user prompt) -> text, as a research
    run takes one (``plansmith.domains.research.ModelCall``)."""

    async def call(system: str, user: str) -> str:
        return await chat(config, system, user)

    return call
