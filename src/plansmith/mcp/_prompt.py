"""The ``plan_and_run`` prompt: walks a host through plan, approve, run and report."""

from __future__ import annotations

__all__ = ["plan_and_run_prompt"]


def plan_and_run_prompt(request: str, domain: str = "") -> str:
    """Plan and run a multi-step job with plansmith in two LLM round trips."""
    where = f"in the domain {domain!r}" if domain else "(call list_domains to pick a domain)"
    return (
        f"Use plansmith to do this job {where}: {request}\n\n"
        "1. Call make_plan with domain and request (or a structured goal). If its status is "
        "needs_choice, show the user its reason and the candidates (there may be none when the "
        "request is outside the domain) and call make_plan again with the chosen goal.\n"
        "2. Show the user the steps and the Mermaid DAG, the tiers that need approval and the "
        "binding check. If needs_approval is true, ask the user; when they agree, call "
        "approve_plan with the plan_hash.\n"
        "3. Call start_run with the plan_hash; it returns a run_id at once.\n"
        "4. Call get_run_status until state is succeeded, failed or cancelled (do not call "
        "any step's tool yourself: plansmith runs every step).\n"
        "5. Call get_run_report and give the user its Markdown."
    )
