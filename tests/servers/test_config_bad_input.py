"""Bad servers files: every mistake is one located ServerConfigError with a hint, never a
traceback; all of a file's problems are reported at once; and big files read in linear time."""

from __future__ import annotations

import contextlib
import gc
import json
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from plansmith.errors import PlansmithError, ServerConfigError
from plansmith.servers import HttpServer, ServersConfig, StdioServer, load_servers, parse_servers


def _error(text: str, env: dict[str, str] | None = None) -> ServerConfigError:
    with pytest.raises(ServerConfigError) as info:
        parse_servers(text, source="s.json", env={} if env is None else env)
    return info.value


def _where(item: object) -> str:
    """``file:line:col`` of an error or of a server."""
    return str(getattr(item, "location", None) or getattr(item, "loc", None))


def _servers(body: str) -> str:
    return '{"mcpServers": {"a": ' + body + "}}"


def test_bytes_that_are_not_utf8_are_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_bytes(b'{"mcpServers": {\n  "a": {"command": "caf\xe9"}}}')
    with pytest.raises(ServerConfigError) as info:
        load_servers(path, env={})
    assert _where(info.value) == f"{path}:2:24"
    assert "UTF-8" in info.value.message
    assert info.value.hint


def test_deep_nesting_is_a_located_error_not_a_recursion_error() -> None:
    text = _servers('{"command": "x", "args": ' + "[" * 100_000 + "]" * 100_000 + "}")
    error = _error(text)
    assert "nested" in error.message
    assert error.location is not None
    # three objects, then the list that opens level 65
    assert (error.location.line, error.location.column) == (1, text.index("[") + 62)
    assert error.hint


def test_each_server_is_located_at_its_own_key_even_if_named_like_a_key() -> None:
    text = (
        '{"mcpServers": {\n  "a": {"command": "x"},\n  "command": {"command": "y"},\n'
        '  "c\\u0064": {"url": "http://h/"}\n}}'
    )
    a, command, cd = parse_servers(text, source="s.json", env={}).servers
    assert (command.name, _where(command)) == ("command", "s.json:3:3")
    assert (cd.name, _where(cd)) == ("cd", "s.json:4:3")
    assert _where(a) == "s.json:2:3"


def test_a_field_error_points_at_the_value() -> None:
    error = _error('{"mcpServers": {\n  "a": {"command": "x"},\n  "command": {"command": 42}}}')
    assert _where(error) == "s.json:3:26"
    assert "server 'command': command must be a string, not the number 42" in error.message


def _timed(n: int, repeats: int) -> float:
    """The least CPU time (not wall-clock: other processes do not count) of reading a file
    of ``n`` servers, with the garbage collector off (its passes grow with the heap)."""
    args = ["--flag", "/srv/data"] * 10
    text = json.dumps({"mcpServers": {f"s{i}": {"command": "x", "args": args} for i in range(n)}})
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            parse_servers(text, env={})
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


def test_reading_many_servers_takes_linear_time() -> None:
    # 16x the servers: linear takes 16-17x the time; quadratic 256x (a location that
    # rescans the text for every server measured 83-112x)
    small, large = _timed(500, 5), _timed(8000, 3)
    assert large < 64 * small, f"16x the servers took {large / small:.1f}x the time"


def test_the_printed_problem_list_is_capped_but_problems_hold_them_all() -> None:
    text = json.dumps({"mcpServers": {f"s{i}": {"command": 1} for i in range(3000)}})
    error = _error(text)
    assert len(error.problems) == 3000
    printed = str(error)
    assert len(printed) < 10_000
    assert f"and {3000 - ServerConfigError.SHOWN} more" in printed


def test_every_problem_of_a_server_is_reported_at_its_value() -> None:
    error = _error(
        '{"mcpServers": {"a": {"command": 1, "args": "x", "env": [], "maxInFlight": 0}}}'
    )
    places = {p.message.split(":")[1].split()[0]: _where(p) for p in error.problems}
    assert places == {
        "command": "s.json:1:34",
        "args": "s.json:1:45",
        "env": "s.json:1:57",
        "maxInFlight": "s.json:1:76",
    }
    assert all(p.hint for p in error.problems)


def test_a_misspelt_key_is_an_error_that_names_it() -> None:
    error = _error(_servers('{"comand": "x"}'))
    assert "unknown key 'comand'" in error.message
    assert error.hint is not None
    assert "did you mean 'command'?" in error.hint
    assert _where(error) == "s.json:1:23"  # the key, and no 'neither command nor url' too


def _problems(error: ServerConfigError) -> list[tuple[str, str]]:
    """Each problem of ``error`` as (where, message), in the order of the file."""
    return [(_where(p), p.message) for p in error.problems or (error,)]


def _at(text: str, part: str, nth: int = 0) -> str:
    """``s.json:line:col`` of the ``nth`` (0-based) occurrence of ``part`` in ``text``."""
    offset = -1
    for _ in range(nth + 1):
        offset = text.index(part, offset + 1)
    before = text[:offset]
    return f"s.json:{before.count(chr(10)) + 1}:{offset - before.rfind(chr(10))}"


def test_a_misspelt_key_hides_no_other_problem_of_its_server_or_the_file() -> None:
    text = (
        '{"mcpServers": {\n'
        '  "a": {"comand": "x", "args": ["${input:foo}"], "env": {"K": 1}},\n'
        '  "b": {"command": "y", "maxInFlight": 0}\n'
        "}}"
    )
    problems = _problems(_error(text))
    assert [where for where, _ in problems] == [
        _at(text, '"comand"'),
        _at(text, "${input:foo}"),
        _at(text, "1}"),
        _at(text, "0}"),
    ]
    unknown, template, env, limit = (message for _, message in problems)
    assert "server 'a': unknown key 'comand'" in unknown
    assert "server 'a': args: VS Code's '${input:foo}'" in template
    assert "server 'a': env.K must be a string" in env
    assert "server 'b': maxInFlight must be a whole number" in limit
    hints = [p.hint or "" for p in _error(text).problems]
    assert "did you mean 'command'?" in hints[0]


@pytest.mark.parametrize(
    "server",
    [
        '{"command": "x", "url": "http://h/", "args": ["${HOME}"], "headers": {"a b": "v"}}',
        '{"args": ["${HOME}"], "headers": {"a b": "v"}}',
    ],
    ids=["both-command-and-url", "neither"],
)
def test_a_server_without_one_transport_still_has_its_fields_checked(server: str) -> None:
    text = _servers(server)
    problems = _problems(_error(text))
    assert (_at(text, "${HOME}"), "server 'a': args: '${HOME}' is not a template") in problems
    assert _at(text, '"a b"') in [where for where, _ in problems]
    assert len(problems) == 3  # and the transport's own problem


@pytest.mark.parametrize("key", ["Command", "maxInflight", "inherit_env", "header", "URL"])
def test_keys_that_differ_from_ours_in_case_or_a_letter_are_errors(key: str) -> None:
    error = _error(_servers('{"command": "x", "' + key + '": 1}'))
    assert f"unknown key {key!r}" in error.message


def test_keys_that_other_clients_define_are_ignored() -> None:
    other = {
        "disabled": False,
        "autoApprove": [],
        "alwaysAllow": ["read"],
        "timeout": 60,
        "description": "x",
        "envFile": "${workspaceFolder}/.env",
        "transportType": "stdio",
        "gallery": True,
        "dev": {"watch": "src/**"},
        "headersHelper": "x",
        "trust": True,
    }
    config = parse_servers(json.dumps({"mcpServers": {"a": {"command": "x", **other}}}), env={})
    assert config.names == ("a",)


def test_windsurfs_server_url_without_url_is_an_error_naming_url() -> None:
    error = _error(_servers('{"serverUrl": "http://h/mcp"}'))
    assert error.hint is not None
    assert "plansmith reads 'url'" in error.hint


def test_a_duplicate_server_name_is_an_error_at_the_second() -> None:
    error = _error('{"mcpServers": {\n"a": {"command": "x"},\n"a": {"command": "y"}}}')
    assert _where(error) == "s.json:3:1"
    assert error.hint is not None
    assert "first given at line 2" in error.hint


def test_a_duplicate_key_in_a_server_is_an_error_at_the_second() -> None:
    error = _error('{"mcpServers": {"a": {"command": "x",\n "command": "y"}}}')
    assert _where(error) == "s.json:2:2"
    assert "duplicate key 'command'" in error.message
    assert error.hint is not None
    assert "first given at line 1" in error.hint


@pytest.mark.parametrize("value", ['"false"', "0", "null", '"no"'])
def test_inherit_env_must_be_true_or_false(value: str) -> None:
    error = _error(_servers('{"command": "x", "inheritEnv": ' + value + "}"))
    assert "inheritEnv must be true or false" in error.message
    assert _where(error) == "s.json:1:53"


def test_inherit_env_false_is_read() -> None:
    config = parse_servers(_servers('{"command": "x", "inheritEnv": false}'), env={})
    server = config.servers[0]
    assert isinstance(server, StdioServer)
    assert server.inherit_env is False


BAD_TEMPLATES = {
    "${env:}": "not an environment variable name",
    "${env:1X}": "not an environment variable name",
    "${env:A-B}": "not an environment variable name",
    "${env:HOME": "is not closed",
    "${ENV:HOME}": "is not a template",
    "${env:${env:HOME}}": "do not nest",
    "${HOME}": "is not a template",
    "${input:api-key}": "VS Code's '${input:api-key}' (a prompt) is not supported",
    "${workspaceFolder}/x": "VS Code's variable '${workspaceFolder}' is not supported",
    "${userHome}": "VS Code's variable",
    "a ${what ever} b": "is not a template",
}


@pytest.mark.parametrize("template", BAD_TEMPLATES, ids=list(BAD_TEMPLATES))
def test_a_malformed_or_foreign_template_is_a_located_error(template: str) -> None:
    text = json.dumps({"mcpServers": {"a": {"command": "x", "args": ["-v", template]}}})
    error = _error(text, env={"HOME": "/h"})
    assert BAD_TEMPLATES[template] in error.message
    assert error.hint
    assert error.location is not None
    assert error.location.column == text.index("${") + 1  # at the ${ itself


BAD_VALUES = {
    "empty command": ('{"command": ""}', "is empty"),
    "NUL in command": ('{"command": "x\\u0000"}', "NUL"),
    "NUL in an arg": ('{"command": "x", "args": ["a\\u0000"]}', "NUL"),
    "NUL in an env value": ('{"command": "x", "env": {"A": "\\u0000"}}', "NUL"),
    "NUL in cwd": ('{"command": "x", "cwd": "/\\u0000"}', "NUL"),
    "= in an env name": ('{"command": "x", "env": {"A=B": "1"}}', "not an environment variable"),
    "empty env name": ('{"command": "x", "env": {"": "1"}}', "not an environment variable"),
    "NUL in an env name": ('{"command": "x", "env": {"\\u0000": "1"}}', "not an environment"),
    "lone surrogate": ('{"command": "\\ud800"}', "surrogate"),
    "lone surrogate in a key": ('{"command": "x", "\\udfff": 1}', "surrogate"),
    "url without host": ('{"url": "http://"}', "has no host"),
    "port out of range": ('{"url": "http://h:99999/mcp"}', "Port out of range"),
    "url with a space": ('{"url": "http://my host/mcp"}', "space"),
    "url that cannot be split": ('{"url": "http://[::1/mcp"}', "is not a URL"),
    "header with a line break": ('{"url": "http://h/", "headers": {"A": "b\\nc"}}', "header"),
    "header name with a space": ('{"url": "http://h/", "headers": {"A B": "c"}}', "header"),
}


@pytest.mark.parametrize("body", BAD_VALUES.values(), ids=list(BAD_VALUES))
def test_values_a_server_cannot_start_with_are_errors_when_read(body: tuple[str, str]) -> None:
    error = _error(_servers(body[0]))
    assert body[1] in error.message
    assert error.hint
    assert error.location is not None
    assert error.location.column is not None


def test_a_url_from_the_environment_is_checked_after_expansion() -> None:
    error = _error(_servers('{"url": "${env:U}"}'), env={"U": "http://:80/"})
    assert "(after ${env:...}) has no host" in error.message


def test_a_bom_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_bytes('\ufeff{"mcpServers": {"a": {"command": "x"}}}'.encode())
    assert load_servers(path, env={}).names == ("a",)


VS_CODE = """// VS Code's mcp.json: JSON with comments
{
  "inputs": [],  /* prompts: not used here */
  "servers": {
    "a": {"type": "stdio", "command": "x", "args": ["//not a comment", "/*"],},
    // "b": {"command": "off"},
    "c": {"url": "http://127.0.0.1:1/mcp", "maxInFlight": "2"},
  },
}
"""


def test_vs_code_comments_and_trailing_commas_are_read_and_places_stay_exact() -> None:
    good = VS_CODE.replace('"2"', "2")
    a, c = parse_servers(good, source="mcp.json", env={}).servers
    assert isinstance(a, StdioServer)
    assert a.args == ("//not a comment", "/*")
    assert isinstance(c, HttpServer)
    assert _where(c) == "mcp.json:7:5"
    error = _error(VS_CODE)
    assert _where(error) == "s.json:7:59"


def test_an_unclosed_comment_is_a_located_error() -> None:
    error = _error('{"mcpServers": {}} /* open')
    assert _where(error) == "s.json:1:20"
    assert error.hint


def test_a_number_with_too_many_digits_is_a_located_error() -> None:
    error = _error('{"mcpServers": {}, "x": ' + "1" * 5000 + "}")
    assert _where(error) == "s.json:1:25"


HINTED = {
    "empty file": "",
    "comment only": "// nothing",
    "command not a string": _servers('{"command": ["npx"]}'),
    "args not a list": _servers('{"command": "x", "args": "-y"}'),
    "arg not a string": _servers('{"command": "x", "args": [1]}'),
    "env not an object": _servers('{"command": "x", "env": ["A=1"]}'),
    "env value not a string": _servers('{"command": "x", "env": {"A": 1}}'),
    "headers not an object": _servers('{"url": "http://h/", "headers": "x"}'),
    "maxInFlight a string": _servers('{"command": "x", "maxInFlight": "2"}'),
    "url not a string": _servers('{"url": 8800}'),
    "url not http": _servers('{"url": "ws://h/"}'),
    "cwd not a string": _servers('{"command": "x", "cwd": 1}'),
    "server not an object": _servers('"npx"'),
    "servers not an object": '{"mcpServers": []}',
    "top level a list": "[]",
    "misspelt top level": '{"mcpServer": {}}',
    "NaN": _servers('{"command": "x", "maxInFlight": NaN}'),
    "extra data": '{"mcpServers": {}} {}',
}


@pytest.mark.parametrize("text", HINTED.values(), ids=list(HINTED))
def test_every_error_has_a_place_and_a_hint(text: str) -> None:
    error = _error(text)
    assert error.hint
    assert error.location is not None
    assert error.location.line is not None
    assert error.location.column is not None


def test_a_missing_file_is_an_error_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(ServerConfigError) as info:
        load_servers(tmp_path / "nope.json", env={})
    assert "No such file" in info.value.message
    assert info.value.hint


def test_a_misspelt_top_level_key_gets_did_you_mean() -> None:
    error = _error('{"mcpServer": {}}')
    assert error.hint is not None
    assert "did you mean 'mcpServers'?" in error.hint


# --- properties: whatever the input, a config or a plansmith error, nothing else ---

_SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_FEWER = settings(_SETTINGS, max_examples=100)  # each example is a whole generated file
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
_KEYS = st.sampled_from(
    ["command", "args", "env", "cwd", "url", "headers", "type", "maxInFlight", "inheritEnv"]
)


def _read(text: str) -> ServersConfig | PlansmithError:
    try:
        return parse_servers(text, source="s.json", env={"HOME": "/h"})
    except PlansmithError as error:
        return error


@_SETTINGS
@given(st.text())
def test_any_text_gives_a_config_or_a_plansmith_error(text: str) -> None:
    assert isinstance(_read(text), ServersConfig | PlansmithError)


@_SETTINGS
@given(st.binary())
def test_any_bytes_give_a_config_or_a_plansmith_error(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "servers.json"
        path.write_bytes(data)
        with contextlib.suppress(PlansmithError):
            load_servers(path, env={})


@_FEWER
@given(st.dictionaries(st.text(max_size=8), st.dictionaries(_KEYS | st.text(), _JSON)))
def test_any_servers_give_a_config_or_located_errors_with_hints(
    servers: dict[str, dict[str, object]],
) -> None:
    text = json.dumps({"mcpServers": servers}, indent=1)
    result = _read(text)
    if isinstance(result, ServersConfig):
        assert result.names == tuple(servers)
        return
    assert isinstance(result, ServerConfigError)
    for problem in result.problems or (result,):
        assert problem.hint
        assert problem.location is not None
        assert problem.location.column is not None


_OTHER_FIELDS = st.sampled_from(["args", "env", "cwd", "headers", "maxInFlight", "inheritEnv"])


@_FEWER
@given(st.dictionaries(_OTHER_FIELDS, _JSON))
def test_misspelling_command_adds_its_own_problem_and_hides_none(fields: dict[str, object]) -> None:
    # an infinite float makes the file not JSON at all: one problem, no server read
    assume("Infinity" not in json.dumps(fields))

    def problems(command_key: str) -> set[tuple[str, str]]:
        text = json.dumps({"mcpServers": {"a": {command_key: "x", **fields}}}, indent=1)
        result = _read(text)
        if isinstance(result, ServersConfig):
            return set()
        assert isinstance(result, ServerConfigError)
        return {(_where(p), p.message) for p in result.problems or (result,)}

    spelt, misspelt = problems("command"), problems("comand")
    unknown = ("s.json:4:4", "server 'a': unknown key 'comand'")
    assert misspelt == spelt | {unknown}


def _jsonc(value: object) -> str:
    """``value`` as JSON with comments between the items and trailing commas."""
    if isinstance(value, dict):
        items = (f"{json.dumps(k)} /* k */ : {_jsonc(v)}, // c\n" for k, v in value.items())
        return "{" + "".join(items) + "}"
    if isinstance(value, list):
        return "[" + "".join(f"{_jsonc(v)},\n/**/" for v in value) + "]"
    return json.dumps(value)


@_FEWER
@given(st.dictionaries(st.text(max_size=8), st.dictionaries(_KEYS | st.text(), _JSON)))
def test_comments_and_trailing_commas_change_nothing(
    servers: dict[str, dict[str, object]],
) -> None:
    first = _read(json.dumps({"mcpServers": servers}))
    second = _read("// servers\n" + _jsonc({"mcpServers": servers}))
    assert type(first) is type(second)
    if isinstance(first, ServersConfig):
        assert first == second
    else:
        assert isinstance(second, PlansmithError)
        assert first.message == second.message


@pytest.mark.parametrize(
    "before",
    ["caf\\u00e9 ", "\\ud83d\\ude00 \\\\ \\/ ", '\\"quoted\\" ', "plain "],
    ids=["escape", "surrogate-pair-and-escapes", "escaped-quotes", "no-escape"],
)
def test_an_unset_variable_after_escapes_is_located_at_its_own_dollar(before: str) -> None:
    text = '{"mcpServers": {"a": {"command": "' + before + '${env:QA_UNSET_VAR}"}}}'
    with pytest.raises(ServerConfigError) as info:
        parse_servers(text, source="s.json", env={})
    assert info.value.location is not None
    assert info.value.location.column == text.index("${") + 1


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=20), st.booleans())
def test_an_unset_variable_is_located_at_its_dollar_whatever_comes_before(
    before: str, ascii_only: bool
) -> None:
    string = json.dumps(before.replace("$", "") + "${env:QA_UNSET_VAR}", ensure_ascii=ascii_only)
    text = '{"mcpServers": {"a": {"command": ' + string + "}}}"
    with pytest.raises(ServerConfigError) as info:
        parse_servers(text, source="s.json", env={})
    assert info.value.location is not None
    before_dollar = text[: text.rindex("${")]
    assert info.value.location.line == before_dollar.count("\n") + 1
    assert info.value.location.column == len(before_dollar) - before_dollar.rfind("\n")
