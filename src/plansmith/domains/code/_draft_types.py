"""What ``draft_patch`` asks a model, and the checked patch it answers."""

from dataclasses import dataclass, field

__all__ = ["DraftRequest", "PatchDraft"]


@dataclass(frozen=True, slots=True)
class DraftRequest:
    """What the model is asked: a system prompt and the prompt."""

    system: str
    prompt: str


@dataclass(frozen=True)  # no slots: the SDK reads class defaults for the output schema
class PatchDraft:
    """A checked patch, stored as ``path``; ``tasks``, ``objects`` and ``init`` are the
    ``make_plan`` arguments of the patch plan that would apply it (after approval)."""

    run_id: str
    domain: str
    patch: str
    path: str
    sha256: str
    files: tuple[str, ...]
    created: tuple[str, ...]
    added: int
    deleted: int
    summary: str
    source: str
    llm_calls: int
    tasks: tuple[str, ...]
    objects: dict[str, str]
    init: tuple[str, ...]
    warnings: tuple[str, ...] = field(default=())
