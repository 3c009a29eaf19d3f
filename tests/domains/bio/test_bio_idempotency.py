"""The idempotency key: the same key returns the first result and acts once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from plansmith.domains.bio._idempotency import Once


def _counter() -> tuple[list[int], Any]:
    calls: list[int] = []

    def body() -> dict[str, Any]:
        calls.append(1)
        return {"n": len(calls)}

    return calls, body


def test_same_key_returns_the_first_result_without_acting_again() -> None:
    once = Once()
    calls, body = _counter()

    async def go() -> list[tuple[dict[str, Any], bool]]:
        return [await once.run("t", "k1", body) for _ in range(3)]

    results = anyio.run(go)
    assert results == [({"n": 1}, False), ({"n": 1}, True), ({"n": 1}, True)]
    assert len(calls) == 1


def test_no_key_or_another_key_acts_each_time() -> None:
    once = Once()
    calls, body = _counter()

    async def go() -> None:
        await once.run("t", None, body)
        await once.run("t", None, body)
        await once.run("t", "a", body)
        await once.run("other-tool", "a", body)

    anyio.run(go)
    assert len(calls) == 4
    assert once.actions == 4


def test_concurrent_calls_with_one_key_act_once() -> None:
    once = Once()
    calls, body = _counter()
    results: list[dict[str, Any]] = []

    async def one() -> None:
        result, _ = await once.run("t", "same", body)
        results.append(result)

    async def go() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(one)

    anyio.run(go)
    assert len(calls) == 1
    assert results == [{"n": 1}] * 5


def test_a_failed_call_keeps_nothing_so_its_retry_acts(tmp_path: Path) -> None:
    once = Once(tmp_path)
    attempts: list[int] = []

    def flaky() -> dict[str, Any]:
        attempts.append(1)
        if len(attempts) == 1:
            raise ValueError("first attempt fails")
        return {"ok": True}

    async def go() -> dict[str, Any]:
        with pytest.raises(ValueError, match="first attempt"):
            await once.run("t", "k", flaky)
        result, replayed = await once.run("t", "k", flaky)
        assert not replayed
        return result

    assert anyio.run(go) == {"ok": True}
    assert len(attempts) == 2


def test_results_persist_for_a_restarted_server(tmp_path: Path) -> None:
    calls, body = _counter()

    async def go(once: Once) -> tuple[dict[str, Any], bool]:
        return await once.run("t", "k", body)

    assert anyio.run(go, Once(tmp_path)) == ({"n": 1}, False)
    assert anyio.run(go, Once(tmp_path)) == ({"n": 1}, True)
    assert len(calls) == 1
