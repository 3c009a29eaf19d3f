"""Provenance sidecars: ``<output>.prov.json`` says which tool, backend and inputs made it."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import Bio

from plansmith.domains.bio._external import binary_version
from plansmith.domains.bio._paths import sha256_file

__all__ = ["SIDECAR", "backend_version", "write_provenance", "read_provenance"]

SIDECAR = ".prov.json"
SERVER = "plansmith-bio"


@cache
def backend_version(backend: str) -> str:
    """``biopython 1.88``, ``blastn: 2.12.0+``, ``v7.505 (2022/Apr/10)``, ..."""
    if backend == "biopython":
        return f"biopython {Bio.__version__}"
    if backend == "blast+":
        return binary_version("blastn")
    return binary_version(backend)


def write_provenance(
    output: Path,
    *,
    tool: str,
    backend: str,
    inputs: list[Path],
    parameters: dict[str, Any] | None = None,
) -> Path:
    """Write the sidecar of ``output`` (its hash, the tool, the backend, the inputs' hashes)."""
    record = {
        "server": SERVER,
        "tool": tool,
        "backend": backend,
        "backend_version": backend_version(backend),
        "output": {"path": str(output), "sha256": sha256_file(output)},
        "inputs": [{"path": str(p), "sha256": sha256_file(p)} for p in inputs if p.is_file()],
        "parameters": parameters or {},
    }
    side = output.with_name(output.name + SIDECAR)
    side.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return side


def read_provenance(output: Path) -> dict[str, Any] | None:
    """The sidecar of ``output``, or None if there is none (or it is unreadable)."""
    side = output.with_name(output.name + SIDECAR)
    try:
        value = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None
