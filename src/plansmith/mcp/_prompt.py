"""The face's prompts, the common flows a host offers its user: ``plan_and_run`` (plan,
approve, run and report a job), ``review_run`` (what a run did, why a step failed, what
to do next) and ``ask_research`` (a sourced answer from the research desk)."""

from __future__ import annotations

__all__ = ["plan_and_run_prompt", "review_run_prompt", "ask_research_prompt"]


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
        "4. Call await_run (or get_run_status) until state is succeeded, failed or "
        "cancelled (do not call any step's tool yourself: plansmith runs every step). When "
        "state is awaiting answer, a step waits for the user's decision: await_run asks the "
        "user itself if you support elicitation; otherwise show the user each question and "
        "the answers its schema allows, and call answer_question with theirs.\n"
        "5. Call get_run_report and give the user its Markdown."
    )


def review_run_prompt(run_id: str) -> str:
    """Say what a run did, why a step failed, and what to do next."""
    return (
        f"Review the plansmith run {run_id} for the user.\n\n"
        f"1. Call get_run_report with run_id {run_id!r}; its report holds what was asked, "
        "the plan and who approved it, every step with its tool, server, time and outcome, "
        "the failures with their error class, the skipped steps, retries and replans.\n"
        "2. Tell the user, in a few lines: whether the run did the job, what each failed or "
        "skipped step lacked (quote its message), and which replans replaced what.\n"
        "3. Say what to do next: for a failed run whose cause is fixed, that plansmith can go "
        "on with it (`plansmith retry RUN_ID`), its succeeded steps kept; for a run awaiting "
        "approval, that approve_plan with its plan_hash lets it go on. Do not call any "
        "step's tool yourself."
    )


def ask_research_prompt(question: str) -> str:
    """Answer a question from the research desk's sources, with citations."""
    return (
        f"Answer this question with plansmith's research desk, from its sources: {question}\n\n"
        "1. Call start_research with the question; it returns a run_id, the sources it "
        "searches and how the question was split.\n"
        "2. Call get_research_status until its state is succeeded, failed or cancelled.\n"
        "3. Call get_research_report and give the user its answer with every citation as it "
        "stands; where the report names conflicting sources, say so and give both. Answer "
        "only from the report: if it found nothing, say that."
    )
