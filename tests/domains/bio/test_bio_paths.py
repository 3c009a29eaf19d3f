"""Path confinement: only the run roots and the named inputs, after resolving links and ``..``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plansmith.domains.bio._paths import Sandbox, file_ref, sandbox_from_env
from plansmith.errors import InputError


def _box(tmp_path: Path) -> tuple[Sandbox, Path, Path]:
    run = tmp_path / "runs"
    run.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    named = data / "gene.fasta"
    named.write_text(">g\nACGT\n")
    (data / "secret.fasta").write_text(">s\nAAAA\n")
    return Sandbox.of([run], {"gene": named}), run, data


def test_named_input_is_readable_by_name_and_by_path(tmp_path: Path) -> None:
    box, _, data = _box(tmp_path)
    assert box.readable("gene") == (data / "gene.fasta").resolve()
    assert box.readable(str(data / "gene.fasta")) == (data / "gene.fasta").resolve()


def test_file_next_to_a_named_input_is_refused(tmp_path: Path) -> None:
    box, _, data = _box(tmp_path)
    with pytest.raises(InputError, match="path refused"):
        box.readable(str(data / "secret.fasta"))


def test_dotdot_out_of_the_run_root_is_refused(tmp_path: Path) -> None:
    box, run, _ = _box(tmp_path)
    with pytest.raises(InputError, match="outside the run roots"):
        box.writable(str(run / "r1" / ".." / ".." / "escape.txt"))


def test_symlink_inside_the_run_root_to_outside_is_refused(tmp_path: Path) -> None:
    box, run, data = _box(tmp_path)
    link = run / "link.fasta"
    link.symlink_to(data / "secret.fasta")
    with pytest.raises(InputError, match="resolves to"):
        box.readable(str(link))


def test_symlinked_directory_cannot_be_written_through(tmp_path: Path) -> None:
    box, run, data = _box(tmp_path)
    (run / "out").symlink_to(data, target_is_directory=True)
    with pytest.raises(InputError, match="path refused"):
        box.writable(str(run / "out" / "new.fasta"))


def test_outputs_may_not_overwrite_a_named_input(tmp_path: Path) -> None:
    box, run, _ = _box(tmp_path)
    inside = run / "in.fasta"
    inside.write_text(">x\nA\n")
    box2 = Sandbox.of([run], {"x": inside})
    with pytest.raises(InputError, match="overwrite"):
        box2.writable(str(inside))
    assert box.writable(str(run / "a" / "b.txt")).parent.is_dir()


def test_file_uri_is_accepted_like_a_path(tmp_path: Path) -> None:
    box, run, _ = _box(tmp_path)
    f = run / "x.fasta"
    f.write_text(">x\nA\n")
    assert box.readable(f.as_uri()) == f.resolve()


def test_missing_file_inside_the_run_root_says_so(tmp_path: Path) -> None:
    box, run, _ = _box(tmp_path)
    with pytest.raises(InputError, match="no such file"):
        box.readable(str(run / "nope.fasta"))


def test_the_run_root_itself_is_not_an_output(tmp_path: Path) -> None:
    box, run, _ = _box(tmp_path)
    with pytest.raises(InputError):
        box.writable(str(run))


def test_environment_and_arguments_configure_the_sandbox(tmp_path: Path) -> None:
    env = {
        "PLANSMITH_BIO_RUN_ROOT": str(tmp_path / "a"),
        "PLANSMITH_BIO_INPUTS": json.dumps({"gene": str(tmp_path / "g.gb")}),
    }
    box = sandbox_from_env(env, [str(tmp_path / "b")], [f"family={tmp_path / 'f.fa'}"])
    assert box.run_roots == ((tmp_path / "b").resolve(), (tmp_path / "a").resolve())
    assert dict(box.inputs) == {"gene": tmp_path / "g.gb", "family": tmp_path / "f.fa"}


def test_malformed_inputs_variable_is_an_input_error() -> None:
    with pytest.raises(InputError, match="JSON object"):
        sandbox_from_env({"PLANSMITH_BIO_INPUTS": "[1, 2]"})
    with pytest.raises(InputError, match="NAME=PATH"):
        sandbox_from_env({}, [], ["nonsense"])


def test_file_reference_carries_hash_and_size(tmp_path: Path) -> None:
    f = tmp_path / "x.txt"
    f.write_bytes(b"abc")
    ref = file_ref(f)
    assert (
        ref["sha256"] == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
    assert ref["bytes"] == 3
    assert ref["uri"] == f.as_uri()
