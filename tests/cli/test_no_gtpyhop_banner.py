"""plansmith's output is its own: starting a face (``plansmith mcp``, the web app) or
planning a YAML domain does not import GTPyhop (plansmith's stand-in, nor the real
package when it is installed), so GTPyhop's "Imported GTPyhop version ..." banner never
shows; the stand-in is imported when a GTPyhop folder is loaded, and only then."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "doc-pipeline"

# Run in the child: at exit, say which GTPyhop modules the process imported.
_REPORT = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('GTPYHOP-MODULES %s\\n' % sorted("
    "m for m in sys.modules if m == 'gtpyhop' or m.startswith(('gtpyhop.', 'plansmith.compat.'))"
    ")))\n"
)


def _child(code: str, *, stdin: str = "", cwd: Path = ROOT) -> tuple[str, str]:
    # PYTHONHASHSEED=0: `plansmith plan FOLDER` plans in this very process (under another
    # seed it plans in a child, see test_plan_hash_seed.py), so its imports are seen here
    done = subprocess.run(
        [sys.executable, "-c", _REPORT + code],
        env={**os.environ, "PYTHONHASHSEED": "0"},
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout, done.stderr


def _imported(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("GTPYHOP-MODULES ")]
    assert lines, stderr
    return lines[-1].removeprefix("GTPYHOP-MODULES ")


def test_plansmith_mcp_starts_and_answers_without_gtpyhop(tmp_path: Path) -> None:
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "list_domains", "arguments": {}}},
    ]  # fmt: skip
    code = (
        "import sys\nfrom plansmith.cli import main\n"
        f"sys.argv = ['plansmith', 'mcp', '--home', {str(tmp_path / 'home')!r}]\nmain()\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", _REPORT + code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    ) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in range(2)]  # then EOF: it ends
        out, err = proc.communicate(timeout=120)
    assert [a.get("id") for a in answers] == [1, 2], answers
    assert "result" in answers[1], answers[1]
    assert out == "", out  # stdout is JSON-RPC only
    assert "Traceback" not in err, err
    assert "GTPyhop" not in out + err
    assert _imported(err) == "[]"


def test_the_web_app_is_built_without_gtpyhop(tmp_path: Path) -> None:
    code = (
        "from pathlib import Path\nfrom plansmith.web import WebSettings, create_app\n"
        f"create_app(WebSettings(home=Path({str(tmp_path / 'home')!r})))\n"
    )
    out, err = _child(code)
    assert "GTPyhop" not in out + err
    assert _imported(err) == "[]"


def test_plansmith_plan_of_a_yaml_domain_imports_no_gtpyhop(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom plansmith.cli import main\n"
        f"sys.argv = ['plansmith', 'plan', {str(EXAMPLE / 'domain.yaml')!r}, "
        f"{str(EXAMPLE / 'problem.yaml')!r}]\nmain()\n"
    )
    out, err = _child(code, cwd=tmp_path)
    assert out.strip(), err  # the plan
    assert "GTPyhop" not in out + err
    assert _imported(err) == "[]"


def test_the_stand_in_is_imported_when_a_gtpyhop_folder_is_planned(tmp_path: Path) -> None:
    folder = tmp_path / "blocks"
    folder.mkdir()
    (folder / "domain.py").write_text(
        "import gtpyhop\n"
        "domain = gtpyhop.Domain('blocks')\n"
        "def put(state, x):\n"
        "    state.on[x] = 'table'\n"
        "    return state\n"
        "gtpyhop.declare_actions(put)\n"
    )
    (folder / "problems.py").write_text(
        "import gtpyhop\n"
        "def get_problems():\n"
        "    s = gtpyhop.State('s0')\n"
        "    s.on = {'a': 'b'}\n"
        "    return {'p1': (s, [('put', 'a')])}\n"
    )
    code = (
        "import sys\nfrom plansmith.cli import main\n"
        f"sys.argv = ['plansmith', 'plan', {str(folder)!r}, '--problem', 'p1']\nmain()\n"
    )
    out, err = _child(code, cwd=tmp_path)
    assert "put" in out, err
    assert "GTPyhop" not in out + err
    assert "plansmith.compat.gtpyhop" in _imported(err)
    assert "'gtpyhop'" not in _imported(err)  # the stand-in, not the real package
