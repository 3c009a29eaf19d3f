"""LLM-drafted patches for the code domain: the service side of ``draft_patch``.

The face asks the model (host sampling or an OpenAI-compatible endpoint); this
module gives it the prompt, checks each answer, and stores the accepted one:

1. ``draft_request(run_id)`` reads a finished diagnose run of this session (its
   ``report_diagnosis`` outputs: file, function, failing tests and the code read)
   and builds the prompt. The domain's ``apply_patch`` binding names the code
   server; its ``servers.json`` entry gives the server's arguments, and so its
   repository and patch folder (``config_from_args``).
2. ``check_draft(run_id, answer)`` runs every check of ``check_draft`` (text,
   sandbox, ``git apply --check`` in a scratch worktree); results are cached by the
   answer's digest, so the face's resolver and its tool body check once.
3. ``save_draft`` writes ``PATCH_DIR/NAME.patch`` (and ``NAME.json``, where it came
   from) and returns what ``make_plan`` needs for the patch plan: its hash covers
   the patch's SHA-256, so approving the plan approves these bytes.

Nothing here runs the patch: only the approved plan does, through the code server.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from plansmith.domains.code import (
    DRAFT_SYSTEM_PROMPT,
    Diagnosis,
    DraftCheck,
    ServerConfig,
    check_draft,
    draft_prompt,
    draft_repair_prompt,
)
from plansmith.domains.code._draft_types import DraftRequest, PatchDraft
from plansmith.domains.code.server import config_from_args
from plansmith.domains.folders import DomainFolder
from plansmith.errors import InputError, Location, PlansmithError
from plansmith.servers import load_servers

__all__ = ["PatchDesk", "DraftRequest", "PatchDraft", "RunReportOf"]

#: the report (``plansmith.engine.run_report``'s JSON) of a run the caller may read
RunReportOf = Callable[[str, str], Mapping[str, Any]]

_MODULE = "plansmith.domains.code.server"
_CACHE = 32


def _plain(text: str, limit: int = 40) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:limit] or "fix"


def _outputs(step: Mapping[str, Any]) -> dict[str, Any]:
    return {str(o["from"]).rsplit(".", 1)[-1]: o["value"] for o in step.get("outputs", [])}


class PatchDesk:
    """See the module docstring: ``folders`` are the face's domain folders, ``report_of
    (run_id, owner)`` reads a run's report as that owner may (the face's)."""

    def __init__(self, folders: Mapping[str, DomainFolder], report_of: RunReportOf) -> None:
        self.folders = folders
        self._report_of = report_of
        self._draft_checks: dict[tuple[str, str], DraftCheck | PlansmithError] = {}

    # -- what the model is asked -------------------------------------------------------

    def _diagnosis(self, run_id: str, owner: str) -> tuple[str, Diagnosis]:
        report = self._report_of(run_id, owner)
        domain = str(report.get("asked", {}).get("domain", ""))
        steps = report.get("steps", [])
        found = next(
            (s for s in steps if s["action"] == "report_diagnosis" and s["outcome"] == "succeeded"),
            None,
        )
        if report.get("state") != "succeeded" or found is None:
            raise InputError(
                f"run {run_id} is {report.get('state')}, not a finished diagnosis",
                location=Location(argument="run_id"),
                hint="run the diagnose plan (tasks=['diagnose(suite)']) and wait until "
                "get_run_status says succeeded",
            )
        out = _outputs(found)
        suite = next((s["args"][0] for s in steps if s["action"] == "run_suite" and s["args"]), "")
        return domain, Diagnosis(
            run_id=run_id,
            file=str(out.get("file", "")),
            function=str(out.get("function", "")),
            line=int(out.get("line") or 0),
            failing_tests=tuple(str(t) for t in out.get("failing_tests") or ()),
            report=str(out.get("report", "")),
            suite=str(suite or "suite"),
        )

    def _code_config(self, domain: str) -> ServerConfig:
        folder = self.folders.get(domain)
        binding = folder.bindings.get("apply_patch") if folder and folder.bindings else None
        if folder is None or binding is None or not folder.servers_file.is_file():
            raise InputError(
                f"domain {domain!r} has no apply_patch binding and servers.json",
                location=Location(argument="run_id"),
                hint="draft_patch works on runs of the code domain",
            )
        server = load_servers(folder.servers_file).get(binding.server)
        args = getattr(server, "args", None)
        if args is None:
            raise InputError(
                f"the code server {binding.server!r} is not a stdio server",
                location=Location(str(folder.servers_file)),
                hint="draft_patch reads the code server's arguments from servers.json",
            )
        argv = list(args)
        if _MODULE in argv:
            argv = argv[argv.index(_MODULE) + 1 :]
        config = config_from_args(argv)
        if config.patch_dir is None:
            raise InputError(
                "the code server has no patch folder, so a drafted patch could not be applied",
                location=Location(str(folder.servers_file)),
                hint="set patch_dir in the code server's config (e.g. HOME/patches)",
            )
        return config

    def draft_request(
        self,
        run_id: str,
        *,
        note: str | None = None,
        refused: tuple[str, str] | None = None,
        owner: str = "",
    ) -> DraftRequest:
        """The prompt for the diagnose run ``run_id``; with ``refused`` (an answer and
        why it was refused), the one repair prompt."""
        domain, diagnosis = self._diagnosis(run_id, owner)
        self._code_config(domain)  # fail before asking a model when nothing could apply it
        prompt = draft_prompt(diagnosis, note=note)
        if refused is not None:
            prompt = draft_repair_prompt(prompt, *refused)
        return DraftRequest(system=DRAFT_SYSTEM_PROMPT, prompt=prompt)

    # -- checking and storing an answer ---------------------------------------------------

    def _checked(self, run_id: str, answer: str, owner: str) -> tuple[str, Diagnosis, DraftCheck]:
        domain, diagnosis = self._diagnosis(run_id, owner)
        cache = self._draft_checks
        key = (domain, hashlib.sha256(answer.encode("utf-8", "surrogatepass")).hexdigest())
        result = cache.get(key)
        if result is None:
            try:
                result = check_draft(self._code_config(domain), answer)
            except PlansmithError as error:
                result = error
            if len(cache) >= _CACHE:
                cache.pop(next(iter(cache)))
            cache[key] = result
        if isinstance(result, PlansmithError):
            raise result
        return domain, diagnosis, result

    def check_draft(self, run_id: str, answer: str, *, owner: str = "") -> str | None:
        """None when ``answer`` passes every check; else the refusal, as text for the model."""
        try:
            self._checked(run_id, answer, owner)
        except PlansmithError as error:
            code = getattr(error, "code", type(error).__name__)
            return f"{code}: {error.message}" + (f" ({error.hint})" if error.hint else "")
        return None

    def save_draft(
        self,
        run_id: str,
        answer: str,
        *,
        source: str,
        llm_calls: int,
        branch: str | None = None,
        owner: str = "",
    ) -> PatchDraft:
        """Store the checked draft in the code server's patch folder; what the patch plan needs."""
        domain, diagnosis, checked = self._checked(run_id, answer, owner)
        config = self._code_config(domain)
        assert config.patch_dir is not None  # _code_config refuses a server without one
        name = f"llm-{_plain(diagnosis.function, 30)}-{checked.sha256[:12]}"
        branch_name = _plain(branch, 64) if branch else f"fix-{_plain(diagnosis.function, 30)}"
        branch_name = f"{branch_name}-{checked.sha256[:8]}" if not branch else branch_name
        path = config.patch_dir / f"{name}.patch"
        _write_once(path, checked.diff.encode("utf-8"))
        provenance = {
            "run_id": run_id,
            "source": source,
            "llm_calls": llm_calls,
            "sha256": checked.sha256,
            "files": list(checked.files),
            "diagnosis": {"file": diagnosis.file, "function": diagnosis.function},
            "drafted_at": round(time.time(), 3),
        }
        _write_once(path.with_suffix(".json"), json.dumps(provenance, indent=2).encode())
        digest = f"sha256-{checked.sha256}"
        suite = diagnosis.suite
        warnings = tuple(f"the patch edits the test file {t}" for t in checked.tests)
        return PatchDraft(
            run_id=run_id,
            domain=domain,
            patch=name,
            path=str(path),
            sha256=checked.sha256,
            files=checked.files,
            created=checked.created,
            added=checked.added,
            deleted=checked.deleted,
            summary=_summary(diagnosis, checked, name),
            source=source,
            llm_calls=llm_calls,
            tasks=(f"apply_and_prove({name}, {branch_name}, {suite})",),
            objects={name: "patch", digest: "digest", branch_name: "branch", suite: "suite"},
            init=(
                f"configured({suite})",
                f"new_branch({branch_name})",
                f"patch_file({name}, {digest})",
            ),
            warnings=warnings,
        )


def _summary(diagnosis: Diagnosis, checked: DraftCheck, name: str) -> str:
    files = ", ".join(checked.files)
    return (
        f"{name}: +{checked.added} -{checked.deleted} lines in {files}, drafted by a model for "
        f"`{diagnosis.function}` ({diagnosis.file}); it applies cleanly to HEAD. Nothing ran: "
        "make the patch plan with tasks/objects/init, and have a person approve its hash."
    )


def _write_once(path: Path, data: bytes) -> None:
    """Write ``path`` atomically; an existing file must hold the same bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and not path.is_symlink() and path.suffix == ".patch":
        if path.read_bytes() == data:
            return
        raise InputError(
            f"{path} exists with other bytes",
            location=Location(str(path)),
            hint="remove the old patch file, or draft again",
        )
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
