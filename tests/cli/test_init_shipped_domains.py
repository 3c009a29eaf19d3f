"""``plansmith init`` on the real servers of plansmith's own domains (bio, code, research),
compared with their hand-written domains by bench/compare_init.py (issue 29; the tables
are in docs/own-servers.md, "What init recovers from plansmith's own servers").

Each test starts one domain's servers over stdio (local processes, no network), runs
``plansmith init`` and ``plansmith tools --json`` on them and checks what must hold
whatever the servers list: every hand-written action whose server is an MCP server is
drafted; every draft link is one the live schemas show (same name, both required, same
declared JSON type) and is either a hand-written link or reported as an extra; every
missed link has its reason; ``init``'s printed counts are those of the files it wrote;
the counts the script prints are those of its rows; the guide shows the same table.
Nothing is timed.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import compare_init as ci

_SUMMARY = re.compile(
    r"^(?P<domain>\w+): actions drafted (?P<drafted>\d+)/(?P<actions>\d+)"
    r" \((?P<served>\d+) on MCP servers\), tiers equal (?P<tiers_equal>\d+)/(?P=served),"
    r" draft tools unused (?P<unused_tools>\d+); links recovered"
    r" (?P<recovered>\d+)/(?P<links>\d+), missed (?P<missed>\d+), extra (?P<extra_links>\d+);"
    r" draft: (?P<draft_actions>\d+) actions, (?P<draft_links>\d+) links$",
    re.MULTILINE,
)


def _tables(markdown: str) -> list[list[str]]:
    """The body rows of each Markdown table, in order."""
    tables: list[list[str]] = []
    rows: list[str] | None = None
    for line in markdown.splitlines():
        if line.startswith("|---"):
            rows = []
            tables.append(rows)
        elif line.startswith("| ") and rows is not None:
            rows.append(line)
        else:
            rows = None
    return tables


@pytest.mark.parametrize("domain", ci.DOMAINS)
def test_init_on_a_shipped_domains_servers(domain: str, tmp_path: Path) -> None:
    found = ci.compare_domain(domain, tmp_path / domain)

    # every hand-written action on an MCP server has its tool drafted; the others are
    # exactly those whose server is no MCP server (the research desk)
    for row in found.actions:
        assert bool(row.drafted_as) is not bool(row.note), row
    not_served = {row.action for row in found.actions if row.note}
    expected = {"weigh", "verify", "compare", "recommend", "write_report"}
    asks = {"review_homologues"} if domain == "bio" else set()  # a person answers it
    assert not_served == (expected if domain == "research" else asks)
    assert all(
        row.draft_tier in ("read", "write", "execute") for row in found.actions if row.drafted_as
    )

    # no draft link the schemas do not show; each is a hand-written link or an extra
    assert found.schema_errors == []
    recovered = sum(len(k.drafted) for k in found.links if k.recovered)
    assert recovered + len(found.extras) == found.draft_links == len(found.draft_link_list)
    assert all(not k.drafted for k in found.links if not k.recovered)
    for extra in found.extras:
        assert extra.why
        assert (extra.producer, extra.consumer, extra.prop) in found.draft_link_list

    if domain == "bio":  # its one output reference, named alike by both schemas
        (link,) = [k for k in found.links if k.recovered]
        assert (link.producer, link.consumer, link.drafted) == (
            "bio.make_blast_db",
            "bio.blast_search",
            ("database <- database",),
        )

    # every missed link says why; one whose schemas match would be init's bug
    for link in found.links:
        assert link.hand
        assert link.recovered is (link.why == ""), link
        assert "UNEXPLAINED" not in link.why, link

    # init printed what it wrote
    assert ci.printed_counts(found) == (found.draft_actions, found.draft_links)

    # the counts printed (Markdown summary line, tables, JSON) are the rows'
    markdown = ci.render_markdown([found])
    line = _SUMMARY.search(markdown)
    assert line is not None, markdown
    printed = {k: v if k == "domain" else int(v) for k, v in line.groupdict().items()}
    served = [a for a in found.actions if not a.note]
    assert printed == {
        "domain": domain,
        "actions": len(found.actions),
        "served": len(served),
        "drafted": len([a for a in found.actions if a.drafted_as]),
        "tiers_equal": len([a for a in served if a.tier == a.draft_tier]),
        "unused_tools": len(found.unused),
        "links": len(found.links),
        "recovered": len([k for k in found.links if k.recovered]),
        "missed": len([k for k in found.links if not k.recovered]),
        "extra_links": len(found.extras),
        "draft_actions": found.draft_actions,
        "draft_links": found.draft_links,
    }
    tables = _tables(markdown)
    sizes = [len(found.actions), len(found.links)] + ([len(found.extras)] if found.extras else [])
    assert [len(t) for t in tables] == sizes
    document = json.loads(json.dumps(ci.to_json([found])))["domains"][0]
    assert document["counts"] == ci.counts_of(found)
    assert document["counts"] == {k: v for k, v in printed.items() if k != "domain"}
    assert document["summary"] in markdown

    # the guide shows this very table (rerun the script and paste it when it changes)
    guide = (ci.ROOT / "docs" / "own-servers.md").read_text(encoding="utf-8")
    assert markdown.strip() in guide, "docs/own-servers.md: rerun bench/compare_init.py"


def test_an_unknown_domain_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        ci.main(["nope"])
    assert exit_.value.code == 2
    assert "the domains are: bio, code, research" in capsys.readouterr().err
