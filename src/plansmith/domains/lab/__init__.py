"""The lab domain: PCR plate preparation on an Opentrons Flex, run on the protocol simulator.

- ``pcr/domain.yaml``: the ``flex-pcr`` HTN domain; ``problem_for`` writes its problems.
- ``pcr/bindings.yaml``: every action bound to a tool of the ``plansmith-lab`` server.
- ``pcr/servers.json``: the server's three roles (movement, liquid, modules) over one robot.
- ``server.py``: the server. It runs in its own virtual environment (the pins in
  ``requirements-lab.txt``), because ``opentrons`` pins dependencies that clash with
  plansmith's: ``.venv-lab`` in a checkout (``make lab-venv``), else one plansmith builds
  in the user cache directory (``_labenv``); ``plansmith-lab`` (``_launch``) finds it and
  starts the server; see docs/lab.md.

Nothing here imports ``opentrons`` or ``mcp`` (the server's type check in its own venv
reads this package). Running plans on the simulator: ``plansmith.domains.lab.sim``.
"""

from pathlib import Path

from plansmith.domains.lab._labenv import find_lab_python
from plansmith.domains.lab._pcr import BATCH, CHANNELS, PIPETTES, problem_for, units_for
from plansmith.domains.lab._pcr_inputs import PCR_INPUTS, PcrInputs

__all__ = [
    "problem_for",
    "units_for",
    "BATCH",
    "CHANNELS",
    "PIPETTES",
    "LAB_DIR",
    "PCR_DIR",
    "PCR_INPUTS",
    "PcrInputs",
    "PCR_DOMAIN",
    "PCR_BINDINGS",
    "PCR_SERVERS",
    "SERVER_SCRIPT",
    "find_lab_python",
]

LAB_DIR = Path(__file__).resolve().parent
PCR_DIR = LAB_DIR / "pcr"
PCR_DOMAIN = LAB_DIR / "pcr" / "domain.yaml"
PCR_BINDINGS = LAB_DIR / "pcr" / "bindings.yaml"
PCR_SERVERS = LAB_DIR / "pcr" / "servers.json"
SERVER_SCRIPT = LAB_DIR / "server.py"
