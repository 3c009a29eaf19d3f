"""Secret redaction: known shapes go, ordinary code stays, and lines keep their numbers."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plansmith.domains.code import redact
from plansmith.domains.code._redact import RedactingFilter, redact_value


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("API_KEY=abcd1234efgh", "abcd1234efgh"),
        ("export DB_PASSWORD=hunter2 with space", "hunter2"),
        ("db_password=lowercase_secret", "lowercase_secret"),
        ('token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"', "ghp_abcdefghij"),
        ("key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
        ("postgres://user:s3cr3t@db.example.com/x", "s3cr3t"),
        ('{"client_secret": "very-secret-value"}', "very-secret-value"),
        ("secret: plainyamlsecret123", "plainyamlsecret123"),
        ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnop"),
        ("xoxb-1234567890-abcdefghij", "xoxb-1234567890"),
        ("sk-ant-api03-abcdefghijklmnopqrstuvwx", "abcdefghijklmnop"),
        (
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop",
            "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
        ),
        ("+export SERVICE_TOKEN=plain-value-123", "plain-value-123"),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n"
            "-----END OPENSSH PRIVATE KEY-----",
            "b3BlbnNzaC1rZXk",
        ),
        ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq truncated", "MIIEvQIBADANBgkq"),
    ],
)
def test_known_secret_shapes_are_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out
    assert "[REDACTED:" in out


@pytest.mark.parametrize(
    "text",
    [
        "password = get_password()",
        "def token_count(tokens):\n    return len(tokens)",
        "d[item] += 1",
        "sha256:0123456789abcdef0123456789abcdef",
        "https://example.com/path",
    ],
)
def test_ordinary_code_is_left_alone(text: str) -> None:
    assert redact(text) == text


@given(
    st.text(
        alphabet=st.sampled_from(list("aZ=_-:/\"' \nkeyPASSWORDtoken-----BEGIN PRIVATEKY0123")),
        max_size=300,
    )
)
def test_redaction_keeps_line_count_and_is_idempotent(text: str) -> None:
    once = redact(text)
    assert once.count("\n") == text.count("\n")
    assert redact(once) == once


def test_values_in_json_structures_are_redacted() -> None:
    value = {"a": ["API_KEY=abcdefgh12345"], "b": 3, "c": {"d": "AKIAIOSFODNN7EXAMPLE"}}
    out = redact_value(value)
    assert "abcdefgh12345" not in str(out)
    assert "AKIAIOSFODNN7EXAMPLE" not in str(out)
    assert out["b"] == 3


def test_log_records_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("plansmith.test.redact")
    record = logger.makeRecord(
        logger.name, logging.ERROR, __file__, 1, "token %s", ("ghp_" + "a" * 36,), None
    )
    RedactingFilter().filter(record)
    assert "ghp_" not in record.getMessage()
