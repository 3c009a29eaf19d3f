"""The stand-in is a package under the name ``gtpyhop`` (issue 34): with
``sys.modules["gtpyhop"]`` set to it, GTPyhop's examples import
``gtpyhop.test_harness``, ``gtpyhop.memory_tracking``, ``gtpyhop.logging_system``
and ``gtpyhop.examples.*`` without any ``__path__`` trick, and plan with plansmith."""

from __future__ import annotations

import importlib
import importlib.machinery
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

HAVE_GTPYHOP = importlib.machinery.PathFinder.find_spec("gtpyhop") is not None
needs_gtpyhop = pytest.mark.skipif(not HAVE_GTPYHOP, reason="gtpyhop 2.0.2 is not installed")

ALIAS = "import sys\nfrom plansmith.compat import gtpyhop\nsys.modules['gtpyhop'] = gtpyhop\n"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", ALIAS + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@needs_gtpyhop
def test_a_classic_example_runs_with_the_test_harness() -> None:
    done = _run(
        """
        import gtpyhop.test_harness as th
        from gtpyhop.examples import blocks_htn
        blocks_htn.main(False)
        assert th.check_result is sys.modules['plansmith.compat._gtpyhop_harness'].check_result
        real = sys.modules.get('gtpyhop.main')
        assert real is None or real.__name__ == 'gtpyhop.main' and not hasattr(real, 'seek_plan')
        print('FILE', blocks_htn.__file__)
        """
    )
    assert done.returncode == 0, done.stderr
    assert "check_result> The result is as expected." in done.stdout
    assert "Imported GTPyhop version" not in done.stdout  # the real planner never loaded
    examples = Path(importlib.machinery.PathFinder.find_spec("gtpyhop").origin).parent  # type: ignore[arg-type, union-attr]
    assert f"FILE {examples / 'examples' / 'blocks_htn' / '__init__.py'}" in done.stdout


@needs_gtpyhop
def test_the_regression_tests_run_under_the_alias() -> None:
    done = _run(
        """
        gtpyhop.set_verbose_level(0)
        from gtpyhop.examples import regression_tests
        regression_tests.main_legacy()
        assert gtpyhop.is_domain_created('gtpyhop.examples.blocks_htn')
        """
    )
    assert done.returncode == 0, done.stderr


def test_every_submodule_the_examples_import_resolves() -> None:
    done = _run(
        """
        import gtpyhop.test_harness, gtpyhop.test_harness.test_harness
        import gtpyhop.memory_tracking, gtpyhop.memory_tracking.tracker
        import gtpyhop.memory_tracking.monitor, gtpyhop.logging_system, gtpyhop.main
        from gtpyhop.memory_tracking import MEMORY_TRACKING_AVAILABLE, MemoryTracker
        from gtpyhop.logging_system import get_logger, LogLevel
        from gtpyhop import logging_system, test_harness
        assert test_harness is sys.modules['gtpyhop.test_harness']
        get_logger('s').info('c', 'hello')
        assert gtpyhop.logging_system.get_logger('s').get_logs()[0]['message'] == 'hello'
        assert gtpyhop.main.find_plan is gtpyhop.find_plan
        gtpyhop.set_verbose_level(2)
        assert gtpyhop.main.verbose == 2
        try:
            import gtpyhop.no_such_part
        except ModuleNotFoundError as error:
            assert error.name == 'gtpyhop.no_such_part', error
        else:
            raise AssertionError('imported')
        print('OK')
        """
    )
    assert done.returncode == 0, done.stderr
    assert "OK" in done.stdout


def _public(module: ModuleType) -> set[str]:
    names = getattr(module, "__all__", None)
    if names is not None:
        return set(names)
    return {
        n
        for n, v in vars(module).items()
        if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__
    }


@needs_gtpyhop
@pytest.mark.parametrize(
    ("real", "stand_in"),
    [
        ("gtpyhop.test_harness", "plansmith.compat._gtpyhop_harness"),
        ("gtpyhop.test_harness.test_harness", "plansmith.compat._gtpyhop_harness"),
        ("gtpyhop.memory_tracking", "plansmith.compat._gtpyhop_memory"),
        ("gtpyhop.logging_system", "plansmith.compat._gtpyhop_logging"),
    ],
)
def test_the_submodules_provide_gtpyhops_public_names(real: str, stand_in: str) -> None:
    real_module = importlib.import_module(real)
    ours = importlib.import_module(stand_in)
    assert _public(real_module) - set(vars(ours)) == set()
    for name in _public(real_module):
        theirs = getattr(real_module, name)
        if inspect.isfunction(theirs):
            mine = inspect.signature(getattr(ours, name)).parameters
            assert list(mine) == list(inspect.signature(theirs).parameters), name


def test_the_finder_leaves_the_real_gtpyhop_alone() -> None:
    done = _run(
        """
        import os
        os.environ['GTPYHOP_QUIET'] = 'true'
        del sys.modules['gtpyhop']
        import importlib.machinery
        if importlib.machinery.PathFinder.find_spec('gtpyhop') is not None:
            import gtpyhop.test_harness
            assert gtpyhop.test_harness.__file__.endswith('test_harness/__init__.py')
            assert gtpyhop.__file__.endswith('gtpyhop/__init__.py')  # not compat/gtpyhop.py
        print('OK')
        """
    )
    assert done.returncode == 0, done.stderr
    assert "OK" in done.stdout
