"""GTPyhop domain packages: a folder with ``domain.py`` and ``problems.py``.

``load_gtpyhop_package`` imports the folder as a package, with ``stand_in`` (a
module with GTPyhop's API, normally :mod:`plansmith.compat.gtpyhop`) installed
as ``gtpyhop`` in ``sys.modules`` while the code is imported, and the previous
``gtpyhop`` modules, ``sys.path`` and the standard streams restored afterwards.
``get_problems()`` comes from ``problems.py`` or else from the package's
``__init__.py`` (as in GTPyhop's IPC-2020 examples). Each problem is a tuple
``(state, todo[, description])`` where ``todo`` is a list of tasks, goals and
actions, a multigoal, or a dict of goals (a multigoal over the domain's only
unigoal state variable, as GTPyhop's IPC benchmark runner builds it).

Importing a package runs its code: load only folders you trust.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import io
import itertools
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

from plansmith.errors import DomainError, InputError, Location, ParseError, ProblemError
from plansmith.model import ActionSchema, Domain, PyDomain, PyProblem, TypedName

__all__ = ["load_gtpyhop_package", "load_gtpyhop_problems", "py_domain_of", "action_domain"]

_PACKAGE = "_plansmith_gtpyhop_package_{}"
_COUNTER = itertools.count(1)


def py_domain_of(domain: Any, source: str | None = None) -> PyDomain:
    """The :class:`PyDomain` of a GTPyhop ``Domain`` object (read by attribute name)."""
    try:
        return PyDomain(
            name=str(domain.__name__),
            actions=tuple(domain._action_dict.items()),
            task_methods=tuple((k, tuple(v)) for k, v in domain._task_method_dict.items()),
            unigoal_methods=tuple((k, tuple(v)) for k, v in domain._unigoal_method_dict.items()),
            multigoal_methods=tuple(domain._multigoal_method_list),
            source=source,
        )
    except (AttributeError, TypeError):
        raise DomainError(
            f"{domain!r} is not a GTPyhop domain",
            location=Location(source) if source else None,
            hint="create the domain with gtpyhop.Domain(name) in domain.py",
        ) from None


def load_gtpyhop_package(
    folder: str | Path, problem: str | None, *, stand_in: ModuleType
) -> tuple[PyDomain, PyProblem]:
    """The domain and the problem named ``problem`` (None: the only one) of a folder."""
    root = _checked(folder)
    with _standing_in(stand_in):
        domain, problems = _load(root, stand_in)
        return domain, _problem(problems, problem, domain, stand_in, root)


def load_gtpyhop_problems(
    folder: str | Path, *, stand_in: ModuleType
) -> tuple[PyDomain, tuple[PyProblem, ...]]:
    """The domain and every problem of a folder, in the order of ``get_problems()``."""
    root = _checked(folder)
    with _standing_in(stand_in):
        domain, problems = _load(root, stand_in)
        found = tuple(_problem(problems, str(k), domain, stand_in, root) for k in problems)
        return domain, found


def _load(root: Path, stand_in: ModuleType) -> tuple[PyDomain, Mapping[Any, Any]]:
    package, domain_module, problems_module = _import(root)
    domain_object = _domain_object(domain_module, stand_in, root)
    problems = _problems(package, problems_module, root)
    return py_domain_of(domain_object, str(root / "domain.py")), problems


def _checked(folder: str | Path) -> Path:
    root = Path(folder)
    if not root.is_dir():
        raise InputError(
            f"no such GTPyhop domain folder: {root}",
            location=Location(str(root)),
            hint="give the folder that holds domain.py and problems.py",
        )
    for needed in ("domain.py", "problems.py"):
        if not (root / needed).is_file():
            raise InputError(
                f"the folder {root} has no {needed}",
                location=Location(str(root / needed)),
                hint="a GTPyhop domain folder holds domain.py (the domain) and problems.py "
                "(with get_problems())",
            )
    return root


#: one load at a time in the process: a load swaps ``sys.modules["gtpyhop"]`` and
#: redirects ``sys.stdout``, both process-wide (a face plans in worker threads)
_LOADING = threading.RLock()


@contextlib.contextmanager
def _standing_in(stand_in: ModuleType) -> Iterator[None]:
    with _LOADING:
        yield from _swapped(stand_in)


def _swapped(stand_in: ModuleType) -> Iterator[None]:
    saved = {k: v for k, v in sys.modules.items() if k == "gtpyhop" or k.startswith("gtpyhop.")}
    path = list(sys.path)
    before = set(sys.modules)
    for key in saved:
        del sys.modules[key]
    sys.modules["gtpyhop"] = stand_in
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            yield
    finally:
        for key in set(sys.modules) - before:
            if key == "gtpyhop" or key.startswith(("gtpyhop.", "_plansmith_gtpyhop_package_")):
                del sys.modules[key]
        sys.modules.pop("gtpyhop", None)
        sys.modules.update(saved)
        sys.path[:] = path


def _import(root: Path) -> tuple[ModuleType, ModuleType, ModuleType]:
    name = _PACKAGE.format(next(_COUNTER))
    init = root / "__init__.py"
    try:
        if init.is_file():
            spec = importlib.util.spec_from_file_location(
                name, init, submodule_search_locations=[str(root)]
            )
            assert spec is not None
            assert spec.loader is not None
            package = importlib.util.module_from_spec(spec)
            sys.modules[name] = package
            spec.loader.exec_module(package)
        else:
            package = ModuleType(name)
            package.__path__ = [str(root)]
            sys.modules[name] = package
        domain = importlib.import_module(f"{name}.domain")
        problems = importlib.import_module(f"{name}.problems")
    except SyntaxError as error:
        raise ParseError(
            f"Python syntax error: {error.msg}",
            location=Location(error.filename or str(root), error.lineno, error.offset),
            hint="fix the syntax of the domain package",
        ) from None
    except (Exception, SystemExit) as error:
        raise _code_error(error, root, "importing the domain package failed") from error
    return package, domain, problems


def _code_error(error: BaseException, root: Path, what: str) -> DomainError:
    hint = "run the package with GTPyhop to see the full traceback"
    if isinstance(error, ImportError) and "gtpyhop" in str(error):
        hint = (
            "the code imports a part of GTPyhop that plansmith does not provide "
            "(see docs/htn.md for what it does)"
        )
    return DomainError(
        f"{what}: {type(error).__name__}: {error}",
        location=_site(error.__traceback__, root) or Location(str(root)),
        hint=hint,
    )


def _site(trace: TracebackType | None, root: Path) -> Location | None:
    """The deepest line of the traceback inside ``root``."""
    found: Location | None = None
    folder = str(root.resolve())
    while trace is not None:
        file = trace.tb_frame.f_code.co_filename
        if str(Path(file).resolve()).startswith(folder):
            found = Location(file, trace.tb_lineno)
        trace = trace.tb_next
    return found


def _domain_object(module: ModuleType, stand_in: ModuleType, root: Path) -> Any:
    found = getattr(module, "the_domain", None)
    if found is not None and hasattr(found, "_action_dict"):
        return found
    current = getattr(stand_in, "get_current_domain", None)
    found = current() if callable(current) else getattr(stand_in, "current_domain", None)
    if found is None:
        raise DomainError(
            "domain.py creates no GTPyhop domain",
            location=Location(str(root / "domain.py")),
            hint="create one with the_domain = Domain('name') before declaring actions",
        )
    return found


def _problems(package: ModuleType, module: ModuleType, root: Path) -> Mapping[Any, Any]:
    getter = getattr(module, "get_problems", None) or getattr(package, "get_problems", None)
    file = str(root / "problems.py")
    if not callable(getter):
        raise ProblemError(
            "problems.py defines no get_problems()",
            location=Location(file),
            hint="add def get_problems(): return {name: (state, [tasks...], description)}",
        )
    try:
        problems = getter()
    except Exception as error:
        raise _code_error(error, root, "get_problems() failed") from error
    if not isinstance(problems, Mapping):
        raise ProblemError(
            f"get_problems() returned {type(problems).__name__}, not a dict",
            location=Location(file),
            hint="return a dict {name: (state, todo[, description])}",
        )
    return problems


def _problem(
    problems: Mapping[Any, Any],
    wanted: str | None,
    domain: PyDomain,
    stand_in: ModuleType,
    root: Path,
) -> PyProblem:
    file = str(root / "problems.py")
    names = [str(k) for k in problems]
    listed = ", ".join(names[:30]) + (f", ... ({len(names)} in all)" if len(names) > 30 else "")
    if wanted is None:
        if len(names) != 1:
            raise ProblemError(
                f"the package has {len(names)} problems; choose one",
                location=Location(file),
                hint=f"pass --problem NAME, one of: {listed or '(none)'}",
            )
        wanted = names[0]
    key = next((k for k in problems if str(k) == wanted), None)
    if key is None:
        raise ProblemError(
            f"no problem named {wanted!r}",
            location=Location(file),
            hint=f"the problems are: {listed or '(none)'}",
        )
    value = problems[key]
    if not isinstance(value, tuple | list) or len(value) not in (2, 3):
        raise ProblemError(
            f"problem {wanted!r} is not a tuple (state, todo[, description])",
            location=Location(file),
            hint="get_problems() maps each name to (state, [tasks...], 'description')",
        )
    state, goal = value[0], value[1]
    if not isinstance(getattr(state, "__dict__", None), dict):
        raise ProblemError(
            f"the state of problem {wanted!r} is a {type(state).__name__}, not a State",
            location=Location(file),
            hint="build it with gtpyhop.State(name) and set its variables as attributes",
        )
    todo = _todo(goal, wanted, domain, stand_in, file)
    description = str(value[2]) if len(value) == 3 else ""
    return PyProblem(wanted, state, todo, description, file)


def _todo(
    goal: Any, name: str, domain: PyDomain, stand_in: ModuleType, file: str
) -> tuple[Any, ...]:
    if type(goal).__name__ == "Multigoal":
        return (goal,)
    if isinstance(goal, list | tuple):
        return tuple(goal)
    if isinstance(goal, dict):
        multigoal = stand_in.Multigoal(f"goal_{name}")
        if goal and all(isinstance(v, dict) for v in goal.values()):
            for var, wanted in goal.items():
                setattr(multigoal, var, dict(wanted))
            return (multigoal,)
        variables = [v for v, _ in domain.unigoal_methods]
        if len(variables) != 1:
            raise ProblemError(
                f"problem {name!r} gives a goal dict, and the domain has "
                f"{len(variables)} goal state variables, so which one it is about is unclear",
                location=Location(file),
                hint="give the goal as a Multigoal, or as {state_variable: {arg: value}}",
            )
        setattr(multigoal, variables[0], dict(goal))
        return (multigoal,)
    raise ProblemError(
        f"the to-do list of problem {name!r} is a {type(goal).__name__}",
        location=Location(file),
        hint="give a list of tasks and goals, a Multigoal, or a dict of goals",
    )


def action_domain(domain: PyDomain) -> Domain:
    """An action-only domain of a GTPyhop domain, to bind its plans with: each action's
    parameters are its function's, after ``state`` (``a_search_disease(state, query,
    size=25)`` has ``query`` and ``size``; a step gives the first ones, as it was
    planned). Its methods are not in it: a bound plan needs only its actions."""
    actions = tuple(
        ActionSchema(name, tuple(TypedName(p) for p in tuple(_signature(fn))[1:]))
        for name, fn in domain.actions
    )
    return Domain(domain.name, actions=actions, source=domain.source)


def _signature(function: Any) -> Mapping[str, inspect.Parameter]:
    try:
        return inspect.signature(function).parameters
    except (TypeError, ValueError):  # a callable without one: no parameters known
        return {}
