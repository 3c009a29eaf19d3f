"""The compiled build's C extension, src/plansmith/planning/_native.c: hFF and successors.

A hatch build hook, off by default like the mypyc one beside it in pyproject.toml
(``[tool.hatch.build.targets.wheel.hooks.custom]``): ``make compiled`` turns both on
(HATCH_BUILD_HOOKS_ENABLE=1, scripts/build-compiled). A plain install stays pure Python
and runs the same algorithms in heuristics/ff.py and planning/_task.py.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = "src/plansmith/planning/_native.c"
MODULE = "plansmith.planning._native"


class NativeExtensionHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compiles the extension with the interpreter's compiler settings (setuptools)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        # setuptools is the hook's own build dependency: not importable where the hook is off
        from setuptools import Distribution, Extension  # noqa: PLC0415
        from setuptools.command.build_ext import build_ext  # noqa: PLC0415

        out = Path(self.directory) / "native-extension"
        extension = Extension(
            MODULE,
            [str(Path(self.root) / SOURCE)],
            extra_compile_args=["-O3", "-Wall", "-Werror"],
        )
        command = build_ext(Distribution({"name": "plansmith-native", "ext_modules": [extension]}))
        command.build_lib = str(out / "lib")
        command.build_temp = str(out / "temp")
        command.ensure_finalized()
        command.run()
        built = Path(command.get_ext_fullpath(MODULE))
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        if not built.is_file() or not built.name.endswith(suffix):
            raise RuntimeError(f"hatch_build.py: {MODULE} was not built ({built})")
        target = "plansmith/planning/" + built.name
        build_data["force_include"][str(built)] = target
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
