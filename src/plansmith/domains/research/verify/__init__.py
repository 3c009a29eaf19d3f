"""The research verifier, in code: extract values, align claims across sources, label them.

Pure functions over :class:`Evidence` (a passage a source returned, with its
location). :func:`verify` labels every claim ``consistent``, ``disputed`` or
``single-source``; a flagged conflict comes from here, never from a model.
"""

from plansmith.domains.research.verify._claims import (
    MULTI_VALUED,
    Claim,
    ClaimKind,
    Evidence,
    Span,
    claims_of,
    span_lines,
)
from plansmith.domains.research.verify._entities import (
    Entity,
    entity_key,
    find_entities,
    sentences,
)
from plansmith.domains.research.verify._values import (
    DateValue,
    Quantity,
    VersionValue,
    find_counts,
    find_dates,
    find_quantities,
    find_versions,
    parse_date,
)
from plansmith.domains.research.verify._verify import (
    ClaimGroup,
    Conflict,
    Label,
    Verdict,
    align,
    is_stale,
    verify,
    where,
)

__all__ = [
    # values
    "DateValue",
    "VersionValue",
    "Quantity",
    "find_dates",
    "find_versions",
    "find_quantities",
    "find_counts",
    "parse_date",
    # entities and sentences
    "Entity",
    "find_entities",
    "entity_key",
    "sentences",
    # claims
    "Evidence",
    "Claim",
    "ClaimKind",
    "MULTI_VALUED",
    "Span",
    "claims_of",
    "span_lines",
    # verdicts
    "Label",
    "Conflict",
    "ClaimGroup",
    "Verdict",
    "align",
    "verify",
    "is_stale",
    "where",
]
