"""Approval policy: which tiers need a person before a plan runs (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from plansmith.binding import BoundPlan
from plansmith.errors import InputError
from plansmith.model import Tier

__all__ = ["ApprovalPolicy", "tiers_needing_approval"]

_TIERS_HINT = "name tiers read, write, execute (comma-separated), or say none or all"


class _TierListError(InputError, ValueError):
    """A text that is not a list of tiers: an ``InputError`` (exit 2, with a hint), and
    a ``ValueError`` as before, for the callers that catch that."""


@dataclass(frozen=True, slots=True)
class ApprovalPolicy:
    """The tiers a person must approve; by default ``write`` and ``execute``."""

    needs_person: frozenset[Tier] = frozenset({Tier.WRITE, Tier.EXECUTE})

    @staticmethod
    def parse(text: str) -> ApprovalPolicy:
        """``"write,execute"``, ``"none"`` or ``"all"``. An empty text (an unset shell
        variable) is refused, not read as "no tier needs a person": approval is turned
        off only by saying ``none``. A text that is not a list of tiers raises an
        ``InputError`` (which is also a ``ValueError``) naming the unknown words."""
        words = {w.strip() for w in text.split(",") if w.strip()}
        if not words:
            raise _TierListError(
                "no tier named: say none to let every plan run unapproved", hint=_TIERS_HINT
            )
        if words == {"none"}:
            return ApprovalPolicy(frozenset())
        if words == {"all"}:
            return ApprovalPolicy(frozenset(Tier))
        known = {t.value for t in Tier}
        unknown = sorted(words - known)
        if unknown:
            raise _TierListError(
                f"{text!r} is not a list of tiers: unknown {', '.join(map(repr, unknown))}",
                hint=_TIERS_HINT,
            )
        return ApprovalPolicy(frozenset(Tier(w) for w in words))

    def text(self) -> str:
        """The policy as ``parse`` reads it: the tiers, sorted and comma-separated, or
        ``none``."""
        return ",".join(sorted(t.value for t in self.needs_person)) or "none"


def tiers_needing_approval(bound: BoundPlan, policy: ApprovalPolicy) -> tuple[str, ...]:
    """The tiers of ``bound``'s steps that ``policy`` says a person must approve, sorted."""
    return tuple(sorted({s.tier.value for s in bound.steps if s.tier in policy.needs_person}))
