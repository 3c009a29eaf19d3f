"""The bindings reader on bad input: a located, typed error with a hint, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _fuzz_values import plansmith_error, values_of
from plansmith.binding import Binding, load_bindings, parse_bindings
from plansmith.errors import BindingError, InputError, Location, ParseError, PlansmithError

BINDING = "bindings:\n  a:\n    server: s\n    tool: t\n"


def _problems(text: str, source: str = "b.yaml") -> list[PlansmithError]:
    """The located problems ``text`` has (one for a syntax error)."""
    with pytest.raises(InputError) as info:
        parse_bindings(text, source=source)
    error = info.value
    problems = list(error.problems) if isinstance(error, BindingError) else []
    return problems or [error]


def _one(text: str, source: str = "b.yaml") -> PlansmithError:
    problems = _problems(text, source)
    assert len(problems) == 1, [str(p) for p in problems]
    return problems[0]


def _at(error: PlansmithError, line: int, column: int | None = None) -> bool:
    loc = error.location
    return (
        loc is not None
        and loc.file == "b.yaml"
        and loc.line == line
        and (column is None or loc.column == column)
    )


def _only(text: str) -> Binding:
    (binding,) = parse_bindings(text, source="b.yaml").bindings
    return binding


# 1. bytes that are not UTF-8


def test_a_file_that_is_not_utf8_is_a_parse_error_at_the_bad_byte(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_bytes(b"bindings:\n  a: {server: s\xc3\xa9, tool: t\xff}\n")
    with pytest.raises(ParseError) as info:
        load_bindings(path)
    assert info.value.location == Location(str(path), 2, 26)  # characters, not bytes
    assert "not UTF-8" in info.value.message
    assert "0xff" in info.value.message
    assert info.value.hint


def test_a_utf8_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + BINDING.encode())
    assert load_bindings(path).get("a") is not None


def test_an_unreadable_path_is_a_binding_error_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(BindingError) as info:
        load_bindings(tmp_path)
    assert info.value.location == Location(str(tmp_path))
    assert info.value.hint


# 2. merge keys, tags, dates, bad conversions, a value inside itself


def test_a_merge_key_fills_a_binding_and_its_own_keys_win() -> None:
    text = "base: &base {server: s, tool: t0, timeout: 5}\nbindings:\n  b: {<<: *base, tool: u}\n"
    binding = _only(text)
    assert (binding.server, binding.tool, binding.policy.timeout) == ("s", "u", 5.0)


def test_merge_keys_work_inside_arguments() -> None:
    text = BINDING + "    arguments:\n      base: &d {x: 1, y: 2}\n      more: {<<: *d, y: 3}\n"
    assert _only(text).arguments == {"base": {"x": 1, "y": 2}, "more": {"x": 1, "y": 3}}


@pytest.mark.parametrize(
    ("text", "line", "tag"),
    [
        ("bindings:\n  a: {server: s, tool: !foo echo}\n", 2, "!foo"),
        (BINDING + "    arguments: {x: !!python/name:os.system }\n", 5, "!!python/name:os.system"),
        (BINDING + "    arguments: {x: [1, !foo bar]}\n", 5, "!foo"),
        (BINDING + "    arguments: {x: !!set {a: null}}\n", 5, "!!set"),
        (BINDING + "    arguments: {x: !!timestamp 2024-01-01}\n", 5, "!!timestamp"),
    ],
)
def test_an_unsupported_tag_is_a_located_error(text: str, line: int, tag: str) -> None:
    error = _one(text)
    assert isinstance(error, BindingError)
    assert _at(error, line)
    assert tag in error.message
    assert error.hint


def test_a_date_like_argument_stays_the_text_as_written() -> None:
    text = BINDING + "    arguments: {x: 2024-02-30, y: 2024-01-01, z: 2024-01-01 10:00:00}\n"
    assert _only(text).arguments == {
        "x": "2024-02-30",
        "y": "2024-01-01",
        "z": "2024-01-01 10:00:00",
    }


@pytest.mark.parametrize(
    "value", ["!!int abc", "!!float x", "!!bool maybe", "!!int 1.5", "!!float .nan"]
)
def test_a_tagged_value_that_does_not_convert_is_a_located_error(value: str) -> None:
    error = _one(BINDING + f"    arguments:\n      x: {value}\n")
    assert _at(error, 6, 10)
    assert "not a valid" in error.message
    assert error.hint


def test_a_value_that_contains_itself_through_an_alias_is_a_located_error() -> None:
    error = _one(BINDING + "    arguments: &a [*a]\n")
    assert _at(error, 5, 16)
    assert "contains itself" in error.message
    assert error.hint


def test_a_mapping_that_merges_itself_is_a_located_error() -> None:
    error = _one("bindings:\n  a: &m {<<: *m, server: s, tool: t}\n")
    assert _at(error, 2)
    assert error.hint


# 3. alias bombs


def _laughs(levels: int, merge: bool) -> str:
    if merge:
        rows = ["m0: &m0 {a: 1}"] + [
            f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * 9)}], k{i}: {i}}}"
            for i in range(1, levels + 1)
        ]
        return (
            "defs:\n" + "".join(f"  {r}\n" for r in rows) + f"bindings:\n  a: {{<<: *m{levels}}}\n"
        )
    rows = ["l0: &l0 [lol]"] + [
        f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels + 1)
    ]
    return "defs:\n" + "".join(f"  {r}\n" for r in rows) + BINDING + f"    arguments: *l{levels}\n"


@pytest.mark.timeout(60)  # a guard: the reader once expanded 9**9 values here
@pytest.mark.parametrize("merge", [False, True], ids=["aliases", "merge keys"])
def test_an_alias_bomb_is_refused_with_a_located_error(merge: bool) -> None:
    with pytest.raises(ParseError) as info:
        parse_bindings(_laughs(9, merge), source="b.yaml")
    assert "expand" in info.value.message
    assert info.value.hint
    assert info.value.location is not None
    assert info.value.location.line is not None


def test_aliases_that_expand_modestly_are_read() -> None:
    text = _laughs(3, merge=False)  # 9**3 values
    arguments = _only(text).arguments
    assert isinstance(arguments, list)
    assert len(json.dumps(arguments)) > 9**3 * 5


# 4. policy values


@pytest.mark.parametrize(
    "value", [".nan", ".inf", "-.inf", "0", "-1", "604801", "1e999", "true", "'5'"]
)
def test_a_timeout_must_be_a_finite_number_of_seconds_in_range(value: str) -> None:
    error = _one(BINDING + f"    timeout: {value}\n")
    assert _at(error, 5, 14)
    assert "'timeout' of 'a'" in error.message
    assert error.hint


@pytest.mark.parametrize("value", ["99999999999999999999999", "101", "1.5", "-1", "true", ".nan"])
def test_retries_must_be_a_whole_number_from_0_to_100(value: str) -> None:
    error = _one(BINDING + f"    retries: {value}\n")
    assert _at(error, 5, 14)
    assert "0 to 100" in error.message
    assert error.hint


def test_policy_values_at_their_limits_are_read() -> None:
    policy = _only(BINDING + "    timeout: 604800\n    retries: 100\n    idempotent: yes\n").policy
    assert (policy.timeout, policy.retries, policy.idempotent) == (604800.0, 100, True)
    assert _only(BINDING + "    timeout: 0.25\n    retries: 2.0\n").policy.retries == 2


def test_a_lost_transport_is_re_sent_unless_the_binding_says_no() -> None:
    assert _only(BINDING).policy.resend_on_transport_lost is True
    assert _only(BINDING + "    resend_on_transport_lost: ~\n").policy.resend_on_transport_lost
    off = _only(BINDING + "    resend_on_transport_lost: false\n").policy
    assert off.resend_on_transport_lost is False
    error = _one(BINDING + "    resend_on_transport_lost: 0\n")
    assert "true or false" in error.message
    assert error.hint


# 5. JSON numbers


def test_json_numbers_with_an_exponent_are_numbers() -> None:
    text = (
        '{"bindings":{"a":{"server":"s","tool":"t",'
        '"arguments":{"x":1.5e3,"y":"1e3","z":-2E-2},"timeout":1e1}}}'
    )
    binding = _only(text)
    assert binding.arguments == {"x": 1500.0, "y": "1e3", "z": -0.02}
    assert isinstance(binding.arguments, dict)
    assert isinstance(binding.arguments["x"], float)
    assert binding.policy.timeout == 10.0


def test_a_plain_yaml_scalar_written_as_a_json_number_is_a_number() -> None:
    text = BINDING + "    arguments: {a: 1e3, b: '1e3', c: !!str 1e3, d: 12, e: -0.5}\n"
    assert _only(text).arguments == {"a": 1000.0, "b": "1e3", "c": "1e3", "d": 12, "e": -0.5}


def test_an_argument_number_out_of_range_is_a_located_error() -> None:
    error = _one(BINDING + "    arguments:\n      x: 1e999\n")
    assert _at(error, 6, 10)
    assert "out of range" in error.message
    assert error.hint


def test_yaml_11_words_and_numerals_that_json_lacks_stay_text() -> None:
    text = BINDING + "    arguments: {a: yes, b: no, c: on, d: 0x1F, e: 017, f: 1:20, g: .inf}\n"
    assert _only(text).arguments == {
        "a": "yes", "b": "no", "c": "on", "d": "0x1F", "e": "017", "f": "1:20", "g": ".inf"
    }  # fmt: skip
    text = BINDING + "    arguments: {a: true, b: False, c: ~, d: null, e: }\n"
    assert _only(text).arguments == {"a": True, "b": False, "c": None, "d": None, "e": None}


def test_a_json_file_is_read_as_strict_json(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text('{\n\t"bindings": {\n\t\t"a": {"server": "s", "tool": "t"}\n\t}\n}\n')
    assert load_bindings(path).get("a") is not None  # tabs: JSON, not YAML
    path.write_text('{"bindings": {"a": {"server": "s", "tool": "t",}}}\n')
    with pytest.raises(ParseError) as info:
        load_bindings(path)
    assert info.value.location == Location(str(path), 1, 48)
    assert info.value.hint


# 6. names


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("bindings:\n  a: {server: ~, tool: t}\n", 2, "'server' of 'a'"),
        ("bindings:\n  a: {server: s, tool: [echo_text]}\n", 2, "'tool' of 'a'"),
        ("bindings:\n  a: {server: {x: 1}, tool: t}\n", 2, "'server' of 'a'"),
        ("bindings:\n  a: {server: '', tool: t}\n", 2, "'server' of 'a'"),
        ("bindings:\n  ~: {server: s, tool: t}\n", 2, "a key of 'bindings'"),
        ("bindings:\n  ? [a, b]\n  : {server: s, tool: t}\n", 2, "a key of 'bindings'"),
        (BINDING + "    outputs: {[x]: $.a}\n", 5, "a key of the outputs of 'a'"),
        (BINDING + "    outputs: {x: 3}\n", 5, "output 'x'"),
    ],
)
def test_a_name_that_is_not_text_is_a_located_error(text: str, line: int, what: str) -> None:
    error = _one(text)
    assert _at(error, line)
    assert what in error.message
    assert error.hint


def test_a_plain_scalar_name_is_its_text_as_written() -> None:
    text = "bindings:\n  on:\n    server: 1.10\n    tool: no\n    outputs: {yes: $.x}\n"
    binding = _only(text)
    assert (binding.action, binding.server, binding.tool) == ("on", "1.10", "no")
    assert binding.outputs == (("yes", "$.x"),)


# 7. duplicate keys


@pytest.mark.parametrize(
    ("text", "line", "first"),
    [
        ("bindings:\n  a: {server: s, tool: t}\n  a: {server: s, tool: u}\n", 3, 2),
        ("bindings:\n  a:\n    server: s\n    tool: t\n    tool: u\n", 5, 4),
        ("bindings:\n  a: {server: s, tool: t}\nbindings:\n  b: {server: s, tool: t}\n", 3, 1),
        (BINDING + "    outputs:\n      o: $.a\n      o: $.b\n", 7, 6),
        (BINDING + "    arguments:\n      x: 1\n      x: 2\n", 7, 6),
    ],
    ids=["action", "field", "bindings", "output", "argument"],
)
def test_a_duplicate_key_is_an_error_at_its_second_place(text: str, line: int, first: int) -> None:
    error = _one(text)
    assert _at(error, line)
    assert "duplicate key" in error.message
    assert error.hint is not None
    assert f"first given at line {first}" in error.hint


# 8. top-level keys


def test_a_misspelt_bindings_key_is_an_error_with_a_guess() -> None:
    error = _one("bindingz:\n  a: {server: s, tool: t}\n")
    assert _at(error, 1, 1)
    assert error.hint is not None
    assert "did you mean 'bindings'" in error.hint
    error = _one(BINDING + "Bindings: {}\n")
    assert _at(error, 5, 1)
    assert "unknown top-level key 'Bindings'" in error.message


def test_other_top_level_keys_belong_to_the_domain() -> None:
    text = "$schema: ../schemas/bindings.schema.json\nflex_mapping: {slots: {}}\n" + BINDING
    assert _only(text).tool == "t"


# 9. a location per argument value


def test_every_argument_value_has_its_own_location() -> None:
    text = BINDING + (
        "    arguments:\n"
        "      x: 1\n"
        "      items:\n"
        "        - {name: n, 'a/b': 1, 'c~d': [true]}\n"
        "    outputs: {o: $.a}\n"
    )
    places = {key: (loc.line, loc.column) for key, loc in _only(text).locations}
    assert places == {
        "server": (3, 13),
        "tool": (4, 11),
        "arguments": (6, 7),
        "outputs": (9, 14),
        "outputs.o": (9, 18),
        "arguments/x": (6, 10),
        "arguments/items": (8, 9),
        "arguments/items/0": (8, 11),
        "arguments/items/0/name": (8, 18),
        "arguments/items/0/a~1b": (8, 28),
        "arguments/items/0/c~0d": (8, 38),
        "arguments/items/0/c~0d/0": (8, 39),
    }


def test_a_problem_inside_the_arguments_is_located_at_its_value() -> None:
    text = BINDING + "    arguments:\n      a: 1\n      b:\n        - ok\n        - !foo x\n"
    assert _at(_one(text), 9, 11)


# 10. syntax errors


def test_an_unclosed_quote_is_reported_where_it_opens() -> None:
    text = 'bindings:\n  a:\n    server: s\n    tool: "echo\n' + "    x: 1\n" * 6
    (error,) = _problems(text)
    assert isinstance(error, ParseError)
    assert _at(error, 4, 11)
    assert "never closed" in error.message
    assert "line 11" in error.message
    assert error.hint


def test_an_unclosed_bracket_is_reported_where_it_opens() -> None:
    (error,) = _problems("bindings:\n  a: {server: s, tool: t\n\n")
    assert isinstance(error, ParseError)
    assert _at(error, 2, 6)
    assert error.hint


def test_a_control_character_is_a_located_parse_error() -> None:
    (error,) = _problems("bindings:\n  a: {server: s, tool: t\x01}\n")
    assert isinstance(error, ParseError)
    assert _at(error, 2, 25)
    assert error.hint


# 11. hints everywhere; every problem at once

BAD = [
    "",
    "[a, b]\n",
    "bindings: [a]\n",
    "bindings:\n  a: 3\n",
    "bindings:\n  a: {tool: t}\n",
    "bindings:\n  a: {server: s, tool: t, retry: 2}\n",
    BINDING + "    tier: admin\n",
    BINDING + "    idempotent: maybe\n",
    BINDING + "    outputs: [a]\n",
    BINDING + "    arguments: {<<: 3}\n",
    "bindings:\n  a: {server: s\n",
    "bindings:\n\ta: 1\n",
    "a: 1\n---\nb: 2\n",
    "bindings: *nope\n",
]


@pytest.mark.parametrize("text", BAD)
def test_every_error_has_a_location_and_a_hint(text: str) -> None:
    for error in _problems(text):
        assert error.location is not None
        assert error.location.file == "b.yaml"
        assert error.hint, str(error)


def test_all_problems_of_a_file_are_reported_at_once() -> None:
    text = (
        "bindings:\n"
        "  a: {server: ~, tool: t, timeout: .nan}\n"
        "  b: {server: s, tool: t, retries: 1e30, tiemout: 3}\n"
        "  c: {server: s, tool: t, arguments: {x: !foo 1, y: !!int z}}\n"
        "  a: {server: s, tool: t}\n"
    )
    problems = _problems(text)
    assert sorted((p.location.line, p.location.column) for p in problems if p.location) == [
        (2, 15), (2, 36), (3, 36), (3, 42), (4, 42), (4, 53), (5, 3)
    ]  # fmt: skip
    tiemout = next(p for p in problems if "tiemout" in p.message)
    assert tiemout.hint is not None
    assert "did you mean 'timeout'" in tiemout.hint


# properties: whatever the input, a Bindings or a plansmith error, never anything else

EXAMPLE = BINDING + (
    "    arguments:\n"
    "      entities:\n"
    '        - {name: "${d}", entityType: summary, observations: ["summary of ${d}"]}\n'
    "    outputs:\n"
    '      created: "$.json[0].name"\n'
    '      first: {path: "$.json[0]", default: {name: none}}\n'
    '      kept: {path: "$.json[1].name", optional: true}\n'
    "    timeout: 10\n"
    "    retries: 2\n"
    "    idempotent: true\n"
)
SLOW = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WORDS = [
    "bindings", "server", "tool", "arguments", "outputs", "timeout", "retries", "idempotent",
    "tier", "read", "<<", "a", "s", "t", "$.x", "${d}", "no", "1e3", ".nan", "~",
    "path", "default", "optional", "true",
]  # fmt: skip
VALUES = values_of(WORDS, max_leaves=25)
PIECES = st.sampled_from([
    "&x ", "*x", "<<: ", "!foo ", "!!int ", "[", "]", "{", "}", ",", ": ", "\n", "  ", "- ", '"',
    "'", "#", "?", "\t", "\ufeff", "\x00", "1e3",
])  # fmt: skip


def _read_or_plansmith_error(text: str, source: str = "p.yaml") -> None:
    error = plansmith_error(lambda: parse_bindings(text, source=source))
    for each in [] if error is None else [error, *getattr(error, "problems", ())]:
        assert each.location is not None
        assert each.location.file == source
        assert each.hint


@SLOW
@given(st.text(max_size=300), st.sampled_from(["p.yaml", "p.json"]))
def test_any_text_gives_bindings_or_a_plansmith_error(text: str, source: str) -> None:
    _read_or_plansmith_error(text, source)


@SLOW
@given(st.fixed_dictionaries({"bindings": st.dictionaries(st.sampled_from(WORDS), VALUES)}))
def test_any_yaml_document_gives_bindings_or_a_plansmith_error(document: object) -> None:
    _read_or_plansmith_error(yaml.safe_dump(document, default_flow_style=None))
    _read_or_plansmith_error(json.dumps(document), "p.json")


@SLOW
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), PIECES), min_size=1, max_size=5))
def test_an_edited_example_gives_bindings_or_a_plansmith_error(
    edits: list[tuple[float, float, str]],
) -> None:
    text = EXAMPLE
    for where, cut, piece in edits:
        i = int(where * len(text))
        text = text[:i] + piece + text[i + int(cut * 4) :]
    _read_or_plansmith_error(text)


@SLOW
@given(st.binary(max_size=300), st.sampled_from([b"", EXAMPLE.encode()]))
def test_any_bytes_in_a_file_give_bindings_or_a_plansmith_error(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, prefix: bytes
) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "b.yaml"
    path.write_bytes(prefix + data)
    error = plansmith_error(lambda: load_bindings(path))
    if error is not None:
        assert error.location is not None
        assert error.location.file == str(path)
        assert error.hint


OUTPUT_ENTRY = st.one_of(
    values_of(["path", "default", "optional", "$.x", "$.json[0]", "true", "no"], max_leaves=8),
    st.fixed_dictionaries(
        {"path": st.sampled_from(["$.json[0].name", "$.x[*]", "$..", 3, None])},
        optional={
            "default": st.recursive(
                st.none()
                | st.booleans()
                | st.integers()
                | st.floats(allow_nan=False, allow_infinity=False)
                | st.sampled_from(["${d}", "$.x", "yes", "~"])
                | st.text(max_size=6),
                lambda inner: (
                    st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=4), inner, max_size=3)
                ),
                max_leaves=6,
            ),
            "optional": st.one_of(st.booleans(), st.sampled_from(["yes", "off", "maybe", "1"])),
        },
    ),
)


@SLOW
@given(st.dictionaries(st.sampled_from(["out", "$out", "o2", ""]), OUTPUT_ENTRY, max_size=3))
def test_any_outputs_give_optional_outputs_as_written_or_a_plansmith_error(
    outputs: dict[str, object],
) -> None:
    document = {"bindings": {"a": {"server": "s", "tool": "t", "outputs": outputs}}}
    text = yaml.safe_dump(document, default_flow_style=None)
    # ensure_ascii=False: the JSON reader pairs no \\u surrogate escapes (found here; not
    # about outputs)
    plain = json.dumps(document, ensure_ascii=False)
    for source, written in (("p.yaml", text), ("p.json", plain)):
        error = plansmith_error(lambda: parse_bindings(written, source=source))  # noqa: B023
        if error is not None:
            for each in [error, *error.problems]:
                assert each.location is not None
                assert each.location.file == source
                assert each.hint
            continue
        binding = parse_bindings(written, source=source).bindings[0]
        defaults = dict(binding.defaults)
        for name, entry in outputs.items():
            if not isinstance(entry, dict):
                assert name not in defaults  # a plain path: required
                continue
            assert dict(binding.outputs)[name] == entry["path"]
            if "default" in entry:
                assert defaults[name] == json.loads(json.dumps(entry["default"]))
            elif entry.get("optional") in (True, "yes"):
                assert defaults[name] is None
            else:
                assert name not in defaults
