"""Approval policy: which tiers need a person before a plan runs (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from plansmith.binding import BoundPlan
from plansmith.model import Tier

__all__ = ["ApprovalPolicy", "tiers_needing_approval"]


@dataclass(frozen=True, slots=True)
class ApprovalPolicy:
    """The tiers a person must approve; by default ``write`` and ``execute``."""

    needs_person: frozenset[Tier] = frozenset({Tier.WRITE, Tier.EXECUTE})

    @staticmethod
    def parse(text: str) -> ApprovalPolicy:
        """``"write,execute"``, ``"none"`` or ``"all"``. An empty text (an unset shell
        variable) is a ``ValueError``, not "no tier needs a person": approval is turned
        off only by saying ``none``."""
        words = {w.strip() for w in text.split(",") if w.strip()}
        if not words:
            raise ValueError("no tier named: say none to let every plan run unapproved")
        if words == {"none"}:
            return ApprovalPolicy(frozenset())
        if words == {"all"}:
            return ApprovalPolicy(frozenset(Tier))
        return ApprovalPolicy(frozenset(Tier(w) for w in words))


def tiers_needing_approval(bound: BoundPlan, policy: ApprovalPolicy) -> tuple[str, ...]:
    """The tiers of ``bound``'s steps that ``policy`` says a person must approve, sorted."""
    return tuple(sorted({s.tier.value for s in bound.steps if s.tier in policy.needs_person}))
