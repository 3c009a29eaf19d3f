"""Root of the test tree. Being here makes pytest (import mode "prepend") put ``tests/``
on ``sys.path``, so test modules anywhere below can ``import _shared_servers``."""

import os

import pytest

# `plansmith plan` of a GTPyhop folder starts a plan server when none listens (a
# daemon kept for later plans): the tests' own processes plan in themselves, and the
# plan server's tests (tests/cli/test_plan_server.py) start theirs in private folders.
os.environ.setdefault("PLANSMITH_PLAN_SERVER", "0")

#: Test modules that run a whole face or demo end to end (browsers, whole simulator runs,
#: kill-and-take-over, the built wheel, the chaos suite): `make test` runs them, `make test-fast`
#: skips them.
E2E_MODULES = frozenset(
    {
        "test_web_browser.py",
        "test_web_browser_pages.py",
        "test_web_browser_render.py",
        "test_web_browser_inputs.py",
        "test_web_browser_follow_up.py",
        "test_takeover_faces.py",
        "test_lab_bio_opentrons.py",
        "test_lab_roles.py",
        "test_lab_pcr_run.py",
        "test_code_sessions.py",
        "test_code_draft_patch.py",
        "test_research_concurrent_mcp.py",
        "test_face_inspector.py",
        "test_resume_kill.py",
        "test_notes_to_git.py",
        "test_wheel.py",
        "test_chaos.py",
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in E2E_MODULES:
            item.add_marker(pytest.mark.e2e)
