"""get_dependencies: the declared dependencies of a Python project.

Sources, all at the worktree's root: ``pyproject.toml`` (``[project]``
dependencies and optional dependencies, ``[dependency-groups]``,
``[build-system] requires``, Poetry's tables), ``setup.cfg``
(``install_requires``, ``extras_require``) and ``requirements*.txt`` (also
under ``requirements/``). Nothing is installed or resolved.
"""

from __future__ import annotations

import configparser
import fnmatch
import re
import tomllib
from typing import Any

from plansmith.domains.code._beneath import stat_beneath
from plansmith.domains.code._errors import RefusedError
from plansmith.domains.code._files import read_text
from plansmith.domains.code._paths import Sandbox
from plansmith.domains.code._results import MAX_PAGE, DependenciesResult, Dependency
from plansmith.domains.code._tools_read import list_names

__all__ = ["get_dependencies"]

_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._\-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*$")


def _dep(text: str, group: str, source: str) -> Dependency | None:
    text = text.split("#", 1)[0].strip()
    match = _REQ.match(text)
    if not text or text.startswith("-") or match is None:
        return None
    name, extras, spec = match.groups()
    return Dependency(name=name, spec=f"{extras or ''}{spec}".strip(), group=group, source=source)


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _pyproject(data: dict[str, Any], source: str) -> list[Dependency | None]:
    found: list[Dependency | None] = []
    project = data.get("project", {})
    found += [_dep(d, "runtime", source) for d in _strings(project.get("dependencies"))]
    for extra, items in (project.get("optional-dependencies") or {}).items():
        found += [_dep(d, str(extra), source) for d in _strings(items)]
    for group, items in (data.get("dependency-groups") or {}).items():
        found += [_dep(d, str(group), source) for d in _strings(items)]
    found += [
        _dep(d, "build", source) for d in _strings(data.get("build-system", {}).get("requires"))
    ]
    poetry = data.get("tool", {}).get("poetry", {})
    tables = [("runtime", poetry.get("dependencies") or {})]
    tables += [
        (str(g), t.get("dependencies") or {}) for g, t in (poetry.get("group") or {}).items()
    ]
    for group, table in tables:
        for name, spec in table.items():
            if name != "python":
                text = (
                    spec
                    if isinstance(spec, str)
                    else str(spec.get("version", ""))
                    if isinstance(spec, dict)
                    else ""
                )
                found.append(Dependency(name=name, spec=text, group=group, source=source))
    return found


def _setup_cfg(text: str, source: str) -> list[Dependency | None]:
    parser = configparser.ConfigParser()
    parser.read_string(text)
    found: list[Dependency | None] = []
    if parser.has_option("options", "install_requires"):
        found += [
            _dep(d, "runtime", source)
            for d in parser.get("options", "install_requires").splitlines()
        ]
    if parser.has_section("options.extras_require"):
        for extra, items in parser.items("options.extras_require"):
            found += [_dep(d, extra, source) for d in items.splitlines()]
    return found


def _is_requirements(name: str, pattern: str = "requirements*.txt") -> bool:
    return not name.startswith(".") and fnmatch.fnmatch(name, pattern)


def get_dependencies(box: Sandbox) -> DependenciesResult:
    sources: list[str] = []
    notes: list[str] = []
    found: list[Dependency | None] = []
    candidates = ["pyproject.toml", "setup.cfg"]
    candidates += [n for n in list_names(box.resolve(".")) or [] if _is_requirements(n)]
    try:
        folder = list_names(box.resolve("requirements")) or []
        candidates += [f"requirements/{n}" for n in folder if _is_requirements(n, "*.txt")]
    except RefusedError as error:
        notes.append(f"requirements: skipped ({error.code})")
    for name in candidates:
        try:
            target = box.resolve(name)
            if stat_beneath(target) is None:
                continue
            text, _ = read_text(target)
            if name == "pyproject.toml":
                found += _pyproject(tomllib.loads(text), name)
            elif name == "setup.cfg":
                found += _setup_cfg(text, name)
            else:
                found += [
                    _dep(line, name.rsplit("/", 1)[-1].removesuffix(".txt"), name)
                    for line in text.splitlines()
                ]
        except RefusedError as error:
            notes.append(f"{name}: skipped ({error.code})")
            continue
        except (tomllib.TOMLDecodeError, configparser.Error, AttributeError) as error:
            notes.append(f"{name}: not parsed ({type(error).__name__})")
            continue
        sources.append(name)
    return DependenciesResult(
        sources=sources, dependencies=[d for d in found if d is not None][:MAX_PAGE], notes=notes
    )
