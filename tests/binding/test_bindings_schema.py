"""schemas/bindings.schema.json: valid, it accepts what the bindings reader accepts (the
formats.md example, every shipped bindings file) and catches what the reader refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from _schemas import ROOT, errors, formats_md_example, schema
from plansmith.binding import parse_bindings
from plansmith.errors import BindingError

SHIPPED = sorted(
    path
    for folder in ("domains", "examples")
    for path in (ROOT / "src" / "plansmith" / folder).glob("**/bindings.yaml")
)


def test_schema_describes_every_field_the_reader_has() -> None:
    fields = schema("bindings")["$defs"]["binding"]["properties"]
    assert all("description" in field for field in fields.values())
    assert set(fields) == {
        "server",
        "tool",
        "arguments",
        "outputs",
        "timeout",
        "retries",
        "idempotent",
        "tier",
        "resend_on_transport_lost",
        "when_absent",
    }  # fmt: skip  (the reader's fields, no more)


def test_the_formats_md_example_validates() -> None:
    example = formats_md_example("Bindings", "yaml")
    parse_bindings(example)
    assert errors("bindings", yaml.safe_load(example)) == []


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT / "src")))
def test_every_shipped_bindings_file_validates(path: Path) -> None:
    text = path.read_text("utf-8")
    parse_bindings(text, source=str(path))
    assert errors("bindings", yaml.safe_load(text)) == []


BAD = {
    "no bindings": "other: {}\n",
    "bindings not a mapping": "bindings: [a, b]\n",
    "no tool": "bindings: {a: {server: s}}\n",
    "unknown field": "bindings: {a: {server: s, tool: t, retry: 2}}\n",
    "negative retries": "bindings: {a: {server: s, tool: t, retries: -1}}\n",
    "zero timeout": "bindings: {a: {server: s, tool: t, timeout: 0}}\n",
    "unknown tier": "bindings: {a: {server: s, tool: t, tier: admin}}\n",
    "idempotent as text": "bindings: {a: {server: s, tool: t, idempotent: yes please}}\n",
    "resend as text": "bindings: {a: {server: s, tool: t, resend_on_transport_lost: never}}\n",
    "output not a path": "bindings: {a: {server: s, tool: t, outputs: {n: 3}}}\n",
    "retries not whole": "bindings: {a: {server: s, tool: t, retries: 1.5}}\n",
    "server is null": "bindings: {a: {server: ~, tool: t}}\n",
    "tool is a list": "bindings: {a: {server: s, tool: [echo]}}\n",
    "too many retries": "bindings: {a: {server: s, tool: t, retries: 101}}\n",
    "timeout past a week": "bindings: {a: {server: s, tool: t, timeout: 604801}}\n",
    "output name with $": "bindings: {a: {server: s, tool: t, outputs: {$blob: $.text}}}\n",
    "output without path": "bindings: {a: {server: s, tool: t, outputs: {n: {default: 1}}}}\n",
    "output field unknown": (
        "bindings: {a: {server: s, tool: t, outputs: {n: {path: $.x, dflt: 1}}}}\n"
    ),
    "output default not optional": (
        "bindings: {a: {server: s, tool: t,"
        " outputs: {n: {path: $.x, default: 1, optional: false}}}}\n"
    ),
    "output optional as text": (
        "bindings: {a: {server: s, tool: t, outputs: {n: {path: $.x, optional: maybe}}}}\n"
    ),
}


def test_optional_outputs_validate() -> None:
    text = (
        "bindings:\n  a:\n    server: s\n    tool: t\n    outputs:\n"
        '      n: {path: "$.json[0].name", default: {k: [1]}}\n'
        '      m: {path: "$.json[0].name", optional: true}\n'
        '      o: {path: "$.json[0].name", optional: false}\n'
    )
    assert dict(parse_bindings(text).bindings[0].defaults) == {"n": {"k": [1]}, "m": None}
    assert errors("bindings", yaml.safe_load(text)) == []


@pytest.mark.parametrize("text", BAD.values(), ids=BAD.keys())
def test_what_the_reader_refuses_the_schema_refuses(text: str) -> None:
    with pytest.raises(BindingError):
        parse_bindings(text)
    assert errors("bindings", yaml.safe_load(text))


def test_the_arguments_name_every_reference_form_and_a_fact_reference_validates() -> None:
    arguments = schema("bindings")["$defs"]["binding"]["properties"]["arguments"]
    for form in ("${p}", "${act(x).out}", "${fact(p(x)).out}", "${env.NAME}", "${run.id}"):
        assert form in arguments["description"]
    assert {"text": "${fact(note_read(n)).content}"} in arguments["examples"]
    text = (
        "bindings:\n  record_note:\n    server: memory\n    tool: create_entities\n"
        '    arguments: {text: "${fact(note_read(n)).content}"}\n'
    )
    assert parse_bindings(text).bindings[0].arguments == {"text": "${fact(note_read(n)).content}"}
    assert errors("bindings", yaml.safe_load(text)) == []
