"""A tiny git repository for the code domain's request tests: ``shop`` (a package whose
``double`` is wrong and a test that catches it), with a ``plansmith-code.toml`` naming
the test command."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

CODE = "def double(x):\n    return x + x + 1  # the bug\n"
TEST = "from shop.calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
PROJECT = '[commands]\ntest = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"]\n'


def git(repo: Path, *args: str) -> None:
    """``git ARGS`` in ``repo``, with no user or system config of this machine."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(repo.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x",
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def shop_repo(parent: Path) -> Path:
    """``parent/shop``: the package, its failing test and its project file, committed."""
    repo = parent / "shop"
    (repo / "shop").mkdir(parents=True)
    (repo / "shop" / "__init__.py").write_text("")
    (repo / "shop" / "calc.py").write_text(CODE)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text(TEST)
    (repo / "plansmith-code.toml").write_text(PROJECT)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "shop")
    return repo
