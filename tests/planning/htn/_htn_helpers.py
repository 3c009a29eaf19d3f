"""Shared fixtures of the HTN tests: the doc-pipeline example, GTPyhop's bundled
examples, and running code with plansmith's stand-in installed as ``gtpyhop``."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from plansmith.formats import load_domain, load_problem
from plansmith.model import Problem, PyDomain

ROOT = Path(__file__).resolve().parents[3]
DOC_PIPELINE = ROOT / "examples" / "doc-pipeline"


def doc_pipeline_htn() -> Problem:
    domain = load_domain(DOC_PIPELINE / "domain.yaml")
    return load_problem(DOC_PIPELINE / "problem-htn.yaml", domain)


def real_gtpyhop() -> ModuleType:
    """The real GTPyhop 2.0.2 (the peer), imported quietly."""
    os.environ.setdefault("GTPYHOP_QUIET", "true")
    with contextlib.redirect_stdout(io.StringIO()):
        return importlib.import_module("gtpyhop")


def examples_dir() -> Path:
    return Path(real_gtpyhop().__file__).parent / "examples"


MCP_DOMAINS = (
    "bio_opentrons",
    "cross_server",
    "drug_target_discovery",
    "omega_hdq_dna_bacteria_flex_96_channel",
    "rikyu_hpc",
    "tnf_cancer_modelling",
)


def pydomain_of(domain: Any) -> PyDomain:
    from plansmith.formats import py_domain_of

    return py_domain_of(domain)


@contextlib.contextmanager
def compat_as_gtpyhop() -> Iterator[ModuleType]:
    """Install plansmith's stand-in as ``gtpyhop`` (its own finder resolves
    ``gtpyhop.test_harness`` and ``gtpyhop.examples``); restore after."""
    from plansmith.compat import gtpyhop as compat
    from plansmith.compat._gtpyhop_objects import RUNTIME

    settings = dict(vars(RUNTIME))
    settings["domains"] = list(RUNTIME.domains)
    real_gtpyhop()  # imported first, so that the real package is restored after
    saved = {k: v for k, v in sys.modules.items() if k == "gtpyhop" or k.startswith("gtpyhop.")}
    for key in saved:
        del sys.modules[key]
    sys.modules["gtpyhop"] = compat
    try:
        yield compat
    finally:
        for key in [k for k in sys.modules if k == "gtpyhop" or k.startswith("gtpyhop.")]:
            del sys.modules[key]
        sys.modules.update(saved)
        vars(RUNTIME).update(settings)
        for name in ("verbose", "current_domain"):  # examples assign these on the module
            compat.__dict__.pop(name, None)
        for name, value in list(vars(compat).items()):  # submodules, set by the imports
            if isinstance(value, ModuleType) and value.__name__.startswith("gtpyhop."):
                del compat.__dict__[name]
