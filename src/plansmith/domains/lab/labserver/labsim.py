"""A simulated Flex whose Protocol Engine runs in the calling thread.

``opentrons.simulate.get_protocol_api(level, robot_type="Flex")`` starts the
Protocol Engine on an event loop in a thread of its own; every engine command
of the protocol API then goes there and back (``ChildThreadTransport``): two
thread switches per command, about two commands per tool call and many more for
``mix``. On a loaded machine each switch waits for a time slice. ``open_flex``
builds the same protocol context from the same parts (the hardware simulator;
the engine and run orchestrator that ``create_protocol_engine_in_thread``
makes, with the simulator's configuration; the engine core), but keeps the
engine's event loop out of any thread and runs it in the caller's thread for as
long as each command takes. The engine, its command handlers and all its
checks (tips, volumes, deck slots, modules) are the simulator's own; only the
thread they run in differs.

It also remembers two deck-definition lookups that the engine repeats for every
move (``_memo_deck_lookups``). ``Flex.close()`` finishes the run and stops the
hardware simulator, so a reset leaves no thread behind (``get_protocol_api``
keeps every engine until exit). With another opentrons, whose internals differ,
and with ``PLANSMITH_LAB_ENGINE_THREAD=1``, ``open_flex`` uses ``get_protocol_api``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from typing import Any, Final, cast

from opentrons import simulate
from opentrons.protocol_api import ProtocolContext, TrashBin

try:  # opentrons 9.x internals; without them, open_flex takes the standard way
    from opentrons.protocol_api.core.engine import ProtocolCore
    from opentrons.protocol_engine.clients import ChildThreadTransport, SyncClient
    from opentrons.protocol_engine.clients.transports import RunStoppedBeforeCommandError
    from opentrons.protocol_engine.commands import CommandStatus
    from opentrons.protocol_engine.create_protocol_engine import _protocol_engine
    from opentrons.protocol_engine.error_recovery_policy import ErrorRecoveryType, never_recover
    from opentrons.protocol_engine.errors import ProtocolCommandFailedError
    from opentrons.protocol_engine.resources import deck_configuration_provider as provider
    from opentrons.protocol_engine.resources.camera_provider import CameraProvider
    from opentrons.protocol_engine.types import PostRunHardwareState
    from opentrons.protocols import parse
    from opentrons.protocols.api_support.deck_type import (
        should_load_fixed_trash_area_for_python_protocol,
        should_load_fixed_trash_labware_for_python_protocol,
    )

    _HAVE_PARTS = all(
        hasattr(simulate, name)
        for name in ("_make_hardware_simulator", "_get_protocol_engine_config")
    )
except ImportError:
    _HAVE_PARTS = False

__all__ = ["Flex", "open_flex", "ENGINE_THREAD_ENV"]

ENGINE_THREAD_ENV = "PLANSMITH_LAB_ENGINE_THREAD"
_FLEX: Final = "OT-3 Standard"


def _drive(loop: asyncio.AbstractEventLoop, awaitable: Any) -> Any:
    """Run ``loop`` in this thread until ``awaitable`` is done, and return its result.

    A role session of the robot process calls the robot from its own event loop's
    thread (the call blocks that loop: the robot does one thing at a time). asyncio
    refuses to run a loop while another runs in the same thread, so the running
    loop is set aside for the call and put back after it.
    """
    outer = asyncio.events._get_running_loop()
    if outer is None:
        return loop.run_until_complete(awaitable)
    asyncio.events._set_running_loop(None)
    try:
        return loop.run_until_complete(awaitable)
    finally:
        asyncio.events._set_running_loop(outer)


class Flex:
    """A protocol context on a simulated Flex, and how to shut it down."""

    def __init__(self, ctx: ProtocolContext, close: Callable[[], None], same_thread: bool) -> None:
        self.ctx = ctx
        self.same_thread = same_thread
        self._close = close

    def close(self) -> None:
        """Finish the run and stop the engine and the hardware simulator (once)."""
        close, self._close = self._close, lambda: None
        close()


def open_flex(api_level: str) -> Flex:
    """A fresh simulated Flex at ``api_level``: engine in the caller's thread if possible."""
    if not _HAVE_PARTS or os.environ.get(ENGINE_THREAD_ENV) == "1":
        ctx = simulate.get_protocol_api(api_level, robot_type="Flex")

        def cleanup() -> None:
            with contextlib.suppress(Exception):
                ctx.cleanup()

        return Flex(ctx, cleanup, same_thread=False)
    _memo_deck_lookups()
    version = parse.version_from_string(api_level)
    hardware = simulate._make_hardware_simulator(override=None, robot_type=_FLEX)
    loop = asyncio.new_event_loop()
    try:
        return _same_thread(version, hardware, loop)
    except BaseException:
        loop.close()
        hardware.clean_up()
        raise


def _same_thread(version: Any, hardware: Any, loop: asyncio.AbstractEventLoop) -> Flex:
    # the engine and its run orchestrator, as create_protocol_engine_in_thread makes them
    running = _protocol_engine(
        hardware.wrapped(),
        None,  # file provider
        simulate._get_protocol_engine_config(_FLEX, use_pe_virtual_hardware=True),
        None,  # deck configuration: the simulated one
        never_recover,
        False,  # drop tips after the run
        PostRunHardwareState.STAY_ENGAGED_IN_PLACE,
        should_load_fixed_trash_labware_for_python_protocol(version),
        CameraProvider(),
    )
    engine = _drive(loop, running.__aenter__())
    core = ProtocolCore(
        engine_client=SyncClient(transport=_transport(engine, loop)),
        api_version=version,
        sync_hardware=hardware.sync,
    )
    # as create_protocol_context does it
    ctx = ProtocolContext(api_version=version, core=cast(Any, core), broker=None, deck=None)
    if should_load_fixed_trash_area_for_python_protocol(api_version=version, robot_type=_FLEX):
        trash = ctx.fixed_trash
        assert isinstance(trash, TrashBin)
        engine.add_addressable_area(trash.area_name)

    def close() -> None:
        try:
            with contextlib.suppress(Exception):
                _drive(loop, running.__aexit__(None, None, None))
            with contextlib.suppress(Exception):
                _drive(loop, loop.shutdown_asyncgens())
        finally:
            loop.close()
            hardware.clean_up()

    return Flex(ctx, close, same_thread=True)


def _failed(error: Any) -> Exception:
    return ProtocolCommandFailedError(
        original_error=error, message=f"{error.errorType}: {error.detail}"
    )


def _transport(engine: Any, loop: asyncio.AbstractEventLoop) -> ChildThreadTransport:
    """A ``ChildThreadTransport`` whose calls run ``loop`` in the caller's thread instead.

    The three methods are ``ChildThreadTransport``'s (opentrons 9.1.2), with
    ``run_coroutine_threadsafe(c, loop).result()`` replaced by running ``loop``
    until ``c`` is done.
    """

    class SameThreadTransport(ChildThreadTransport):
        """The engine's commands run on ``loop``, driven by the thread that asks."""

        def execute_command(self, request: Any) -> Any:
            command = _drive(loop, engine.add_and_execute_command(request=request))
            if command.error is not None:
                raise _failed(command.error)
            if command.result is None:
                raise RunStoppedBeforeCommandError(command)
            return command.result

        def execute_command_wait_for_recovery(self, request: Any) -> Any:
            command = _drive(
                loop, engine.add_and_execute_command_wait_for_recovery(request=request)
            )
            if command.error is not None:
                recovery = engine.state_view.commands.get_error_recovery_type(command.id)
                if recovery == ErrorRecoveryType.FAIL_RUN:
                    raise _failed(command.error)
            elif command.status == CommandStatus.QUEUED:
                raise RunStoppedBeforeCommandError(command)
            return command

        def call_method(self, method_name: str, **kwargs: Any) -> Any:
            method = getattr(engine, method_name)
            assert callable(method), f"{method_name} is not a method of ProtocolEngine"

            async def call() -> Any:  # on the loop, as ChildThreadTransport does it
                return method(**kwargs)

            return _drive(loop, call())

    return SameThreadTransport(engine=engine, loop=loop)


def _memo_deck_lookups() -> None:
    """Remember the deck definition lookups that the engine repeats for every move.

    ``get_potential_cutout_fixtures`` and ``get_addressable_area_from_name`` scan the
    deck definition's cutout fixtures and addressable areas; their answers depend
    only on their arguments, and the deck definition of a run never changes. The
    engine asks them a few dozen times per tool call (about a sixth of its time).
    Answers are kept per deck definition object (held, so its id stays its own);
    errors are not kept, so an unknown area is refused as before. The results are
    frozen dataclasses; the set of fixtures is copied for each caller.
    """
    if getattr(provider, "_plansmith_memo", False):
        return
    fixtures = provider.get_potential_cutout_fixtures
    area = provider.get_addressable_area_from_name
    seen_fixtures: dict[tuple[str, int], tuple[Any, str, frozenset[Any]]] = {}
    seen_areas: dict[tuple[str, float, float, float, int], tuple[Any, Any]] = {}

    def get_potential_cutout_fixtures(
        addressable_area_name: str, deck_definition: Any
    ) -> tuple[str, set[Any]]:
        key = (addressable_area_name, id(deck_definition))
        known = seen_fixtures.get(key)
        if known is None or known[0] is not deck_definition:
            cutout_id, found = fixtures(addressable_area_name, deck_definition)
            known = (deck_definition, cutout_id, frozenset(found))
            seen_fixtures[key] = known
        return known[1], set(known[2])

    def get_addressable_area_from_name(
        addressable_area_name: str, cutout_position: Any, deck_definition: Any
    ) -> Any:
        at = cutout_position
        key = (addressable_area_name, at.x, at.y, at.z, id(deck_definition))
        known = seen_areas.get(key)
        if known is None or known[0] is not deck_definition:
            known = (deck_definition, area(addressable_area_name, at, deck_definition))
            seen_areas[key] = known
        return known[1]

    setattr(provider, "get_potential_cutout_fixtures", get_potential_cutout_fixtures)  # noqa: B010
    setattr(provider, "get_addressable_area_from_name", get_addressable_area_from_name)  # noqa: B010
    setattr(provider, "_plansmith_memo", True)  # noqa: B010
