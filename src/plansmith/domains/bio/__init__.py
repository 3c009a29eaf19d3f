"""The bio domain: sequence analysis planned by the classical planner.

The MCP server lives in :mod:`plansmith.domains.bio.server` (it imports the MCP
SDK and Biopython, so it is not imported here). This package exports the
stdlib-only parts: the domain's files, tool detection, and the problem writer.
"""

from plansmith.domains.bio._inputs import BIO_INPUTS, BioInputs
from plansmith.domains.bio._problem import (
    DATA_DIR,
    DOMAIN_DIR,
    GOALS,
    TOOLS,
    BioGoal,
    detect_tools,
    problem_yaml,
    server_config,
    write_problem,
)

__all__ = [
    "BIO_INPUTS",
    "BioInputs",
    "DATA_DIR",
    "DOMAIN_DIR",
    "GOALS",
    "TOOLS",
    "BioGoal",
    "detect_tools",
    "problem_yaml",
    "server_config",
    "write_problem",
]
