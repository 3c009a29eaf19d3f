"""``plansmith check`` reports what is wrong in the bindings, the servers file and the
servers' start-up at once: fixing one does not reveal the next."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import _engine_helpers as eh

import plansmith.cli._check  # noqa: F401  (registers the command on the app)
from _shared_servers import COUNTER

invoke, files = eh.invoke, eh.files


def test_a_bad_bindings_file_and_a_bad_servers_file_are_reported_together(
    tmp_path: Path,
) -> None:
    bad = eh.BINDINGS.replace("    retries: 2\n", "    retries: many\n")
    inputs = eh.write_inputs(tmp_path, n=1, bindings=bad)
    inputs.servers.write_text('{"mcpServers": {"counter": {"command": 42}}}')
    code, _, err = invoke("check", *files(inputs))
    assert code == 2
    assert err.startswith("error: the bindings and the servers file both have problems\n")
    assert "bindings.yaml:7:14: 'retries' of 'summarise' must be" in err
    assert "servers.json:1:40: server 'counter': command must be" in err
    assert err.rstrip().endswith("hint: fix every listed problem")


def test_a_server_that_does_not_start_hides_no_binding_problem_of_another(
    tmp_path: Path,
) -> None:
    bad = eh.BINDINGS.replace("${d}", "${e}", 1).replace(
        "  index:\n    server: counter", "  index:\n    server: broken"
    )
    inputs = eh.write_inputs(tmp_path, n=1, bindings=bad)
    servers = {
        "counter": {"command": sys.executable, "args": [str(COUNTER)]},
        "broken": {"command": str(tmp_path / "no-such-program")},
    }
    inputs.servers.write_text(json.dumps({"mcpServers": servers}))
    code, _, err = invoke("check", *files(inputs))
    assert code == 5  # a server failed
    assert "server(s) did not start: broken" in err
    # the steps on the server that started are checked; those on the broken one are not
    # said to have an unknown server
    assert "${e}: 'summarise' has no parameter 'e'" in err
    assert "unknown server" not in err


def test_a_misspelt_server_in_a_binding_gets_the_servers_file_names_and_a_guess(
    tmp_path: Path,
) -> None:
    bad = eh.BINDINGS.replace("  index:\n    server: counter", "  index:\n    server: countr")
    inputs = eh.write_inputs(tmp_path, n=1, bindings=bad)
    code, _, err = invoke("check", *files(inputs))
    assert code == 2
    assert "unknown server 'countr' for action 'index'" in err
    assert "hint: did you mean 'counter'? the servers file names: counter" in err
