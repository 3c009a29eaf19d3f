"""The module tools of the simulated Flex: thermocycler, temperature module, heater-shaker;
and the protocol's delay."""

from __future__ import annotations

from typing import Any

from labdeck import Deck, RobotError, module_kind, module_status, number, whole

__all__ = ["ModuleTools"]


def _maybe(value: Any, what: str) -> float | None:
    return None if value is None else number(value, what)


class ModuleTools(Deck):
    """``tool_<name>`` methods for the modules role (see ``labtools``)."""

    def tool_load_module(
        self, model: str, location: str | None = None, name: str | None = None
    ) -> dict[str, Any]:
        slot = None
        if location is not None:
            slot = self.slot(location)
            if slot is None:
                raise RobotError(f"a module goes into a deck slot, not {location!r}")
        module = self.ctx.load_module(model, slot)
        kind = module_kind(module)
        name = self.fresh_name(name, kind)
        self.add_module(name, module)
        return {"name": name, "kind": kind, "location": self.module_slots[name][0]}

    def tool_delay(
        self, minutes: Any = 0, seconds: Any = 0, message: str | None = None
    ) -> dict[str, Any]:
        mins, secs = number(minutes, "minutes"), number(seconds, "seconds")
        if mins < 0 or secs < 0:
            raise RobotError("a delay cannot be negative")
        self.ctx.delay(seconds=secs, minutes=mins, msg=message)
        return {"minutes": mins, "seconds": secs, "message": message}

    def _module_result(self, name: str) -> dict[str, Any]:
        return {"module": name, **module_status(self.ctx, self.module(name, ""))}

    def tool_thermocycler_open_lid(self, module: str = "thermocycler") -> dict[str, Any]:
        self.module(module, "thermocycler").open_lid()
        return self._module_result(module)

    def tool_thermocycler_close_lid(self, module: str = "thermocycler") -> dict[str, Any]:
        self.module(module, "thermocycler").close_lid()
        return self._module_result(module)

    def tool_thermocycler_set_block_temperature(
        self,
        temperature: Any,
        hold_time_seconds: Any = None,
        block_max_volume: Any = None,
        module: str = "thermocycler",
    ) -> dict[str, Any]:
        self.module(module, "thermocycler").set_block_temperature(
            number(temperature, "temperature"),
            hold_time_seconds=_maybe(hold_time_seconds, "hold_time_seconds"),
            block_max_volume=_maybe(block_max_volume, "block_max_volume"),
        )
        return self._module_result(module)

    def tool_thermocycler_set_lid_temperature(
        self, temperature: Any, module: str = "thermocycler"
    ) -> dict[str, Any]:
        self.module(module, "thermocycler").set_lid_temperature(number(temperature, "temperature"))
        return self._module_result(module)

    def tool_thermocycler_run_profile(
        self,
        steps: list[dict[str, Any]],
        repetitions: Any,
        block_max_volume: Any = None,
        module: str = "thermocycler",
    ) -> dict[str, Any]:
        if not steps:
            raise RobotError("a profile needs at least one step")
        profile = [
            {
                "temperature": number(s["temperature"], "temperature"),
                "hold_time_seconds": number(s["hold_time_seconds"], "hold_time_seconds"),
            }
            for s in steps
        ]
        times = whole(repetitions, "repetitions")
        self.module(module, "thermocycler").execute_profile(
            steps=profile,
            repetitions=times,
            block_max_volume=_maybe(block_max_volume, "block_max_volume"),
        )
        return {**self._module_result(module), "repetitions": times, "steps": len(profile)}

    def tool_thermocycler_deactivate_lid(self, module: str = "thermocycler") -> dict[str, Any]:
        self.module(module, "thermocycler").deactivate_lid()
        return self._module_result(module)

    def tool_thermocycler_deactivate(self, module: str = "thermocycler") -> dict[str, Any]:
        self.module(module, "thermocycler").deactivate()
        return self._module_result(module)

    def tool_temperature_module_set_temperature(
        self, temperature: Any, module: str = "temperature_module"
    ) -> dict[str, Any]:
        self.module(module, "temperature_module").set_temperature(
            number(temperature, "temperature")
        )
        return self._module_result(module)

    def tool_temperature_module_deactivate(
        self, module: str = "temperature_module"
    ) -> dict[str, Any]:
        self.module(module, "temperature_module").deactivate()
        return self._module_result(module)

    def tool_heater_shaker_set_temperature(
        self, temperature: Any, wait: bool = True, module: str = "heater_shaker"
    ) -> dict[str, Any]:
        hs = self.module(module, "heater_shaker")
        if wait:
            hs.set_and_wait_for_temperature(number(temperature, "temperature"))
        else:
            hs.set_target_temperature(number(temperature, "temperature"))
        return self._module_result(module)

    def tool_heater_shaker_shake(self, rpm: Any, module: str = "heater_shaker") -> dict[str, Any]:
        self.module(module, "heater_shaker").set_and_wait_for_shake_speed(whole(rpm, "rpm"))
        return self._module_result(module)

    def tool_heater_shaker_stop_shaking(self, module: str = "heater_shaker") -> dict[str, Any]:
        self.module(module, "heater_shaker").deactivate_shaker()
        return self._module_result(module)

    def tool_heater_shaker_set_latch(
        self, closed: bool, module: str = "heater_shaker"
    ) -> dict[str, Any]:
        hs = self.module(module, "heater_shaker")
        if closed:
            hs.close_labware_latch()
        else:
            hs.open_labware_latch()
        return self._module_result(module)

    def tool_heater_shaker_deactivate(self, module: str = "heater_shaker") -> dict[str, Any]:
        hs = self.module(module, "heater_shaker")
        hs.deactivate_shaker()
        hs.deactivate_heater()
        return self._module_result(module)
