"""Lab plans on the Opentrons simulator: GTPyhop's ``bio_opentrons`` and Omega HDQ DNA
extraction mapped to a Flex, runs
over the lab server's three role servers, run statistics, and the tip-exhaustion replan.

Kept apart from ``plansmith.domains.lab`` (standard library only) because this
imports plansmith's engine and MCP client.
"""

from plansmith.domains.lab.sim._bio import (
    BIO_BINDINGS,
    SCENARIOS,
    FlexMapping,
    bio_opentrons_folder,
    flex_plan,
    one_rack,
    plan_scenario,
    read_mapping,
)
from plansmith.domains.lab.sim._labrun import LabRun, run_bio, run_omega, run_pcr, run_plan
from plansmith.domains.lab.sim._labservers import (
    LAB_PYTHON,
    LAB_PYTHON_ENV,
    REPO_ROOT,
    SERVER_SCRIPT,
    lab_python,
    lab_venv_problem,
    observe,
    require_lab_venv,
    servers_config,
    simulator_command_count,
    simulator_deck,
    simulator_run_log,
    write_servers,
)
from plansmith.domains.lab.sim._made import (
    bio_opentrons_plan,
    checked_scenario,
    dna_extraction_plan,
    make_bio_opentrons_run,
    make_dna_extraction_run,
)
from plansmith.domains.lab.sim._omega import (
    OMEGA_BINDINGS,
    OMEGA_SCENARIOS,
    OmegaMapping,
    omega_folder,
    omega_plan,
    plan_omega,
    read_omega_mapping,
)
from plansmith.domains.lab.sim._stats import RunStats
from plansmith.domains.lab.sim._tips import OUT_OF_TIPS, tip_replanner

__all__ = [
    # GTPyhop's bio_opentrons on a Flex
    "BIO_BINDINGS",
    "SCENARIOS",
    "FlexMapping",
    "bio_opentrons_folder",
    "plan_scenario",
    "read_mapping",
    "flex_plan",
    "one_rack",
    # GTPyhop's Omega HDQ DNA extraction on a Flex (96-channel)
    "OMEGA_BINDINGS",
    "OMEGA_SCENARIOS",
    "OmegaMapping",
    "omega_folder",
    "plan_omega",
    "read_omega_mapping",
    "omega_plan",
    # running lab plans on the simulator
    "LabRun",
    "RunStats",
    "run_plan",
    "run_bio",
    "run_omega",
    # run makers (plansmith.engine.RunMaker): a face's run table makes these runs
    "make_bio_opentrons_run",
    "make_dna_extraction_run",
    "bio_opentrons_plan",
    "dna_extraction_plan",
    "checked_scenario",
    "run_pcr",
    "tip_replanner",
    "OUT_OF_TIPS",
    # the lab server's venv and role servers
    "LAB_PYTHON",
    "LAB_PYTHON_ENV",
    "REPO_ROOT",
    "SERVER_SCRIPT",
    "lab_python",
    "lab_venv_problem",
    "require_lab_venv",
    "servers_config",
    "write_servers",
    "observe",
    "simulator_command_count",
    "simulator_run_log",
    "simulator_deck",
]
