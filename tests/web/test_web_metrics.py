"""GET /metrics scraped through a real server (uvicorn on a free port) and parsed with the
Prometheus client's own parser, and GET /api/metrics: the figures equal those counted by
hand for the log of _metrics_log.py; the token guards both as it guards /api; each app
has a registry of its own, read from the log at each scrape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from _metrics_log import add_run, write_known_log
from _web_helpers import ServerThread, write_domains

from plansmith.web import WebSettings, create_app

TOKEN = "s3cret-token"


def _families(text: str) -> dict[str, Any]:
    from prometheus_client.parser import text_string_to_metric_families

    return {f.name: f for f in text_string_to_metric_families(text)}


def _values(family: Any, suffix: str = "") -> dict[tuple[str, ...], float]:
    """``{label values (sorted by label name): value}`` of the family's samples named
    ``family.name + suffix``."""
    return {
        tuple(v for _, v in sorted(s.labels.items())): s.value
        for s in family.samples
        if s.name == family.name + suffix
    }


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    write_known_log(home)
    return home


def _app(tmp_path: Path, home: Path, token: str | None = None) -> Any:
    return create_app(WebSettings(home=home, domains=write_domains(tmp_path), token=token))


def test_a_scrape_equals_the_hand_counts(tmp_path: Path, home: Path) -> None:
    with ServerThread(_app(tmp_path, home)) as server:
        answer = httpx.get(server.url + "/metrics", timeout=60)
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
        families = _families(answer.text)

        # runs by domain (labels sorted by name: domain, outcome)
        runs = _values(families["plansmith_runs"], "_total")
        assert {k: v for k, v in runs.items() if v} == {
            ("docs", "failed"): 1, ("docs", "succeeded"): 1,
            ("drug-target", "succeeded"): 1, ("lab", "cancelled"): 1,
        }  # fmt: skip
        assert _values(families["plansmith_run_completion_ratio"]) == {
            ("docs",): 0.5, ("drug-target",): 1.0, ("lab",): 0.0
        }  # fmt: skip
        assert _values(families["plansmith_run_steps"], "_total") == {
            ("docs",): 5, ("drug-target",): 1, ("lab",): 0
        }  # fmt: skip
        assert _values(families["plansmith_step_retries"], "_total")[("docs",)] == 1
        assert _values(families["plansmith_replans"], "_total")[("docs",)] == 1
        approvals = _values(families["plansmith_approvals"], "_total")  # (by, domain)
        assert (approvals[("person", "docs")], approvals[("policy", "drug-target")]) == (2, 1)
        kinds = _values(families["plansmith_interventions"], "_total")  # (domain, kind)
        assert {k: v for k, v in kinds.items() if v} == {
            ("docs", "approval"): 2, ("lab", "cancel"): 1
        }  # fmt: skip

        waited = families["plansmith_time_to_approval_seconds"]
        docs = {s.labels.get("le"): s.value for s in waited.samples
                if s.labels["domain"] == "docs"}  # fmt: skip
        assert (docs["10.0"], docs["30.0"], docs["60.0"], docs["300.0"], docs["+Inf"]) == (
            0, 1, 1, 2, 2
        )  # fmt: skip
        sums = _values(waited, "_sum")
        counts = _values(waited, "_count")
        assert (sums[("docs",)], counts[("docs",)], counts[("lab",)]) == (140.0, 2, 0)

        # each tool's calls, successes, failures by class and success ratio (domain,
        # server, tool[, error_class])
        assert _values(families["plansmith_tool_calls"], "_total") == {
            ("docs", "counter", "echo"): 2, ("docs", "counter", "fail"): 2,
            ("docs", "counter", "sleep"): 2, ("drug-target", "dt", "score"): 1,
        }  # fmt: skip
        assert _values(families["plansmith_tool_successes"], "_total") == {
            ("docs", "counter", "echo"): 2, ("docs", "counter", "fail"): 0,
            ("docs", "counter", "sleep"): 1, ("drug-target", "dt", "score"): 1,
        }  # fmt: skip
        assert _values(families["plansmith_tool_failures"], "_total") == {
            ("docs", "tool_error", "counter", "fail"): 2,
            ("docs", "timeout", "counter", "sleep"): 1,
        }  # fmt: skip
        assert _values(families["plansmith_tool_success_ratio"]) == {
            ("docs", "counter", "echo"): 1.0, ("docs", "counter", "fail"): 0.0,
            ("docs", "counter", "sleep"): 0.5, ("drug-target", "dt", "score"): 1.0,
        }  # fmt: skip
        assert _values(families["plansmith_unreadable_runs"]) == {(): 0}

        # read at each scrape: a run another engine adds is there at the next one
        add_run(home, "w5", "docs")
        again = _families(httpx.get(server.url + "/metrics", timeout=60).text)
        assert _values(again["plansmith_runs"], "_total")[("docs", "succeeded")] == 2
        calls = _values(again["plansmith_tool_calls"], "_total")
        assert calls[("docs", "counter", "echo")] == 3

        openmetrics = httpx.get(
            server.url + "/metrics",
            headers={"Accept": "application/openmetrics-text; version=1.0.0"},
            timeout=60,
        )
        assert openmetrics.headers["content-type"].startswith("application/openmetrics-text")
        assert openmetrics.text.rstrip().endswith("# EOF")
        assert "plansmith_runs_total" in openmetrics.text


def test_each_app_has_a_registry_of_its_own(tmp_path: Path, home: Path) -> None:
    from prometheus_client import REGISTRY

    first, second = _app(tmp_path / "a", home), _app(tmp_path / "b", home)
    assert first.state.metrics_registry is not second.state.metrics_registry
    assert not any(m.name.startswith("plansmith_") for m in REGISTRY.collect())


def test_the_token_guards_metrics_as_it_guards_the_api(tmp_path: Path, home: Path) -> None:
    with ServerThread(_app(tmp_path, home, token=TOKEN)) as server:
        for path in ("/metrics", "/api/metrics"):
            refused = httpx.get(server.url + path, timeout=60)
            assert refused.status_code == 401, path
            assert refused.headers["www-authenticate"] == "Bearer"
            wrong = httpx.get(
                server.url + path, headers={"Authorization": "Bearer nope"}, timeout=60
            )
            assert wrong.status_code == 401, path
        scraped = httpx.get(
            server.url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
        )
        assert scraped.status_code == 200
        runs = _values(_families(scraped.text)["plansmith_runs"], "_total")
        assert sum(runs.values()) == 4
        # the stats page holds no data: it loads without the token
        assert httpx.get(server.url + "/stats", timeout=60).status_code == 200


def test_the_api_gives_the_same_figures_as_json_per_domain_and_per_window(
    tmp_path: Path, home: Path
) -> None:
    with ServerThread(_app(tmp_path, home)) as server:
        data = httpx.get(server.url + "/api/metrics?window=1d", timeout=60).json()
        total = data["total"]
        assert (total["runs"], total["finished"], total["completion_rate"]) == (4, 4, 0.5)
        assert total["outcomes"] == {"succeeded": 2, "failed": 1, "cancelled": 1, "unfinished": 0}
        assert (total["steps"], total["steps_per_run"]) == (6, 1.5)
        assert (total["retries"], total["replans"]) == (1, 1)
        assert total["interventions"] == {
            "total": 3, "approvals_by_person": 2, "answers": 0, "cancels": 1, "run_retries": 0
        }  # fmt: skip
        assert total["time_to_approval_s"] == {
            "count": 2, "p50": 20.0, "p95": 120.0, "mean": 70.0, "sum": 140.0
        }  # fmt: skip
        sleep = next(t for t in total["tools"] if t["tool"] == "sleep")
        assert (sleep["calls"], sleep["success_rate"], sleep["failed"]) == (
            2, 0.5, {"timeout": 1}
        )  # fmt: skip
        assert [(d["domain"], d["runs"]) for d in data["by_domain"]] == [
            ("docs", 2), ("drug-target", 1), ("lab", 1)
        ]  # fmt: skip
        assert [(w["start"], w["runs"], w["outcomes"]["succeeded"]) for w in data["by_window"]] == [
            ("2026-01-01T00:00:00Z", 2, 1), ("2026-01-02T00:00:00Z", 2, 1)
        ]  # fmt: skip
        assert (data["window_s"], data["unreadable"]) == (86400, 0)

        since = httpx.get(
            server.url + "/api/metrics", params={"since": "2026-01-02T08:30:00Z"}, timeout=60
        ).json()
        assert [d["domain"] for d in since["by_domain"]] == ["lab"]

        for query in ("window=1y", "window=0d", "since=yesterday"):
            bad = httpx.get(server.url + "/api/metrics?" + query, timeout=60)
            assert bad.status_code == 422, query
            assert bad.json()["error"]["type"] == "InputError"
