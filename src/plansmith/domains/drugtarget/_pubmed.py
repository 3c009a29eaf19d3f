"""pubmed-server (Augmented Nature): NCBI E-utilities answers.

``search_articles`` answers ``{"totalResults", "returnedResults", "start", "pmids": [...],
"articles": [{"pmid", "title", "authors", "journal", "publicationDate", "doi"}],
"queryTranslation"}`` (a search that finds nothing: ``pmids: []``); ``get_article_details``
answers the parsed article (``pmid``, ``title``, ``authors: [{lastName, initials}]``,
``journal``, ``publicationDate`` as ``YYYY-MM-DD``, ...). The public server turns every
error into a JSON-RPC InternalError ``Tool execution failed: ...`` (an unknown PMID:
``Article not found for PMID: N``). A search needs every word of the query (E-utilities'
implicit AND), matched against the title, the authors, the journal and the demo's terms.
"""

from __future__ import annotations

import re
from typing import Any

from plansmith.domains.drugtarget._base import (
    Handler,
    JsError,
    Reply,
    Style,
    data,
    field,
    is_num,
    reply,
    truthy,
    words,
)

__all__ = [
    "STYLE",
    "HANDLERS",
    "search_articles",
    "get_article_details",
    "get_abstract",
    "batch_article_lookup",
    "validate_pmid",
]

STYLE: Style = "internal"

_MONTHS = {
    m: f"{i + 1:02d}"
    for i, m in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    )
}


def _articles() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = data("pubmed")["articles"]
    return found


def _date(text: str) -> str:
    """``parsePubMedDate``: ``1994 Oct 7`` as ``1994-10-07``."""
    for pattern in (
        r"^([0-9]{4})\s+(\w+)\s+([0-9]{1,2})\Z",
        r"^([0-9]{4})\s+(\w+)\Z",
        r"^([0-9]{4})\Z",
    ):
        match = re.match(pattern, text, re.ASCII)
        if match:
            groups = match.groups()
            month = _MONTHS.get(groups[1], "undefined") if len(groups) > 1 else "01"
            day = groups[2].rjust(2, "0") if len(groups) > 2 else "01"
            return f"{groups[0]}-{month}-{day}"
    return text


def _author(a: dict[str, Any]) -> str:
    """An author as E-utilities' summary names one (``Slamon DJ``, or the group's name)."""
    if "collectiveName" in a:
        return str(a["collectiveName"])
    return f"{a['lastName']} {a['initials']}"


def _js_string(value: Any) -> str:
    """``String(value)`` for JSON scalars (integral numbers without a fraction)."""
    if value is None:
        return "undefined"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else str(value)


def _search(term: str) -> list[str]:
    cleaned = re.sub(r"\[[^\]]*\]", " ", term)
    wanted = words(cleaned)
    found = []
    for a in _articles():
        texts = [
            a["pmid"],
            a["title"],
            a["journal"],
            *a["_terms"],
            *(_author(x) for x in a["authors"]),
        ]
        have = {w for t in texts for w in words(t)}
        if wanted and all(w in have for w in wanted):
            found.append(a["pmid"])
    return found


def _details(pmid: str) -> dict[str, Any]:
    a = next((a for a in _articles() if a["pmid"] == pmid), None)
    if a is None:
        raise JsError(f"Article not found for PMID: {pmid}")
    return {
        "pmid": a["pmid"],
        "title": a["title"],
        "authors": a["authors"],
        "journal": a["journal"],
        "publicationDate": _date(a["pubdate"]),
        "articleIds": a["articleIds"],
        "meshTerms": [],
        "publicationTypes": a["publicationTypes"],
        "keywords": [],
        "volume": "",
        "issue": "",
        "pages": "",
        "language": "eng",
    }


def _valid_pmid(pmid: Any) -> bool:
    """``isValidPMID``: ``/^[0-9]+$/`` on the value as a string."""
    if not (isinstance(pmid, str) or is_num(pmid)):
        return False
    return re.fullmatch(r"[0-9]+", _js_string(pmid)) is not None


def _args(args: Any, key: str) -> Any:
    if args is None:
        raise JsError(f"Cannot destructure property '{key}' of 'args' as it is undefined.")
    return field(args, key)


def search_articles(args: Any) -> Reply:
    query = _args(args, "query")
    max_results = field(args, "max_results")
    start = field(args, "start")
    retmax = int(max_results) if is_num(max_results) and max_results > 0 else 20
    retstart = int(start) if is_num(start) and start > 0 else 0
    if not truthy(query):
        body: dict[str, Any] = {
            "totalResults": None,
            "returnedResults": 0,
            "start": None,
            "pmids": [],
            "articles": [],
        }
        return reply(body)
    found = _search(_js_string(query))
    pmids = found[retstart : retstart + retmax]
    by_pmid = {a["pmid"]: a for a in _articles()}
    articles = [
        {
            "pmid": p,
            "title": by_pmid[p]["title"],
            "authors": ", ".join(_author(x) for x in by_pmid[p]["authors"]),
            "journal": by_pmid[p]["journal"],
            "publicationDate": by_pmid[p]["pubdate"],
            "doi": "",
        }
        for p in pmids[:20]
    ]
    body = {
        "totalResults": len(found),
        "returnedResults": len(pmids),
        "start": retstart,
        "pmids": pmids,
        "articles": articles,
        "queryTranslation": _js_string(query),
    }
    return reply(body)


def get_article_details(args: Any) -> Reply:
    pmid = _args(args, "pmid")
    if not _valid_pmid(pmid):
        raise JsError(f"Invalid PMID format: {_js_string(pmid)}")
    return reply(_details(_js_string(pmid)))


def get_abstract(args: Any) -> Reply:
    pmid = _args(args, "pmid")
    if not _valid_pmid(pmid):
        raise JsError(f"Invalid PMID format: {_js_string(pmid)}")
    a = _details(_js_string(pmid))
    body = {
        "pmid": a["pmid"],
        "title": a["title"],
        "abstract": "No abstract available",
        "authors": a["authors"],
        "journal": a["journal"],
        "publicationDate": a["publicationDate"],
    }
    return reply(body)


def batch_article_lookup(args: Any) -> Reply:
    pmids = _args(args, "pmids")
    if not isinstance(pmids, list) or not pmids:
        raise JsError("pmids must be a non-empty array")
    if len(pmids) > 200:
        raise JsError("Maximum 200 PMIDs allowed per batch")
    for pmid in pmids:
        if not _valid_pmid(pmid):
            raise JsError(f"Invalid PMID format: {_js_string(pmid)}")
    known = {a["pmid"] for a in _articles()}
    articles = [_details(_js_string(p)) for p in pmids if _js_string(p) in known]
    return reply(
        {"totalRequested": len(pmids), "totalRetrieved": len(articles), "articles": articles}
    )


def validate_pmid(args: Any) -> Reply:
    pmid = _args(args, "pmid")
    if not _valid_pmid(pmid):
        message = "Invalid PMID format. PMID must contain only digits."
        return reply({"valid": False, "pmid": pmid, "message": message})
    try:
        _details(_js_string(pmid))
    except JsError:
        return reply(
            {
                "valid": True,
                "pmid": pmid,
                "exists": False,
                "message": "Valid PMID format but article not found",
            }
        )
    return reply(
        {"valid": True, "pmid": pmid, "exists": True, "message": "Valid PMID and article exists"}
    )


HANDLERS: dict[str, Handler] = {
    "search_articles": search_articles,
    "get_article_details": get_article_details,
    "get_abstract": get_abstract,
    "batch_article_lookup": batch_article_lookup,
    "validate_pmid": validate_pmid,
}
