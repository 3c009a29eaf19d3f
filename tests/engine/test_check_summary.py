"""``plansmith check``'s line when every binding is good: how many of the servers' tools
the plan uses."""

from __future__ import annotations

from pathlib import Path

import _engine_helpers as eh

import plansmith.cli._check  # noqa: F401  (registers the command on the app)


def test_check_ok_counts_the_tools_the_plan_uses_of_those_the_servers_offer(
    tmp_path: Path,
) -> None:
    inputs = eh.write_inputs(tmp_path, n=3)  # summarise and index, each three times
    code, out, err = eh.invoke("check", *eh.files(inputs))
    assert code == 0, err
    used, offered = out.split(" bound to ")[1].split(" tools of ")[0].split(" of the ")
    assert out.startswith("ok: 6 steps bound to 2 of the ")
    assert int(offered) > int(used) == 2  # the counter server offers more than these two
    assert " tools of 1 server(s); plan sha256:" in out
