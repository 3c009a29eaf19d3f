"""Results of the tools that plans chain: parse_failures, report_diagnosis, apply_patch."""

from __future__ import annotations

from pydantic import BaseModel, Field

from plansmith.domains.code._results import MAX_PAGE

__all__ = ["FailureInfo", "Suspect", "FailuresResult", "DiagnosisResult", "PatchResult"]


class FailureInfo(BaseModel):
    test: str = Field(description="the pytest id")
    file: str
    message: str = Field(description="the first 'E' line of its traceback (redacted)")
    frames: list[str] = Field(description="'file.py:LINE' of its traceback")


class Suspect(BaseModel):
    name: str
    score: float
    reasons: list[str]


class FailuresResult(BaseModel):
    log_id: str
    failures: list[FailureInfo] = Field(description=f"{MAX_PAGE} at most")
    suspects: list[Suspect] = Field(description=f"best first, {MAX_PAGE} at most")
    top_suspect: str = Field(description="the best suspect's name")


class DiagnosisResult(BaseModel):
    file: str = Field(description="where the suspect is defined")
    function: str = Field(description="the suspect's name")
    line: int
    failing_tests: list[str]
    report: str = Field(description="the diagnosis as Markdown")


class PatchResult(BaseModel):
    patch: str = Field(description="the patch's name in the server's patch folder")
    sha256: str
    files: list[str] = Field(description=f"the files it changed, {MAX_PAGE} at most")
    added: int
    deleted: int
