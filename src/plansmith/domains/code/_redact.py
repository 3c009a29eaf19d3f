"""Secret redaction for everything the server returns or logs.

:func:`redact` replaces, in any text:

* private keys (PEM ``-----BEGIN ... PRIVATE KEY-----`` blocks, every line of them);
* well-known token shapes: AWS access key ids, GitHub, GitLab, Slack, Stripe,
  Google, npm, OpenAI and Anthropic keys, JSON Web Tokens, ``Bearer`` credentials,
  and the password in ``scheme://user:password@host`` URLs;
* ``.env``-style assignments whose name says secret (``API_KEY=...``,
  ``export DB_PASSWORD=...``), and quoted values assigned to such names in code
  and config files (``token = "..."``, ``"password": "..."``, ``secret: '...'``).

Replacements keep the line structure (a redacted line stays one line), so line
numbers in paged reads still point at the right place. Redaction runs on a whole
file before it is paged or searched, so a secret cannot be pieced together from
pages or from search hits.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

__all__ = ["redact", "redact_value", "REDACTED", "RedactingFilter"]

REDACTED = "[REDACTED:{}]"

_PEM = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    re.DOTALL,
)

# (name, literal prefixes that must occur for the pattern to match, pattern): the prefixes
# let most texts skip most patterns.
_TOKENS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (name, prefixes, re.compile(pattern))
    for name, prefixes, pattern in (
        (
            "aws-access-key-id",
            ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA"),
            r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b",
        ),
        (
            "github-token",
            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
            r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
        ),
        ("gitlab-token", ("glpat-",), r"\bglpat-[A-Za-z0-9_\-]{20,}"),
        ("slack-token", ("xox",), r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
        ("stripe-key", ("_live_", "_test_"), r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
        ("google-api-key", ("AIza",), r"\bAIza[0-9A-Za-z_\-]{35}"),
        ("npm-token", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),
        ("anthropic-key", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
        ("openai-key", ("sk-",), r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}"),
        ("jwt", ("eyJ",), r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        ("url-password", ("://",), r"(?<=://)[^\s:/@]+:[^\s@/]+(?=@)"),
    )
)
_BEARER = re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9_\-.=+/]{12,}")

_SECRET_WORD = (
    r"(?:secret|token|passw(?:or)?d|passwd|pwd|api[_\-]?key|access[_\-]?key|private[_\-]?key"
    r"|credential|client[_\-]?secret|auth[_\-]?key|session[_\-]?key|signing[_\-]?key)"
)
_WORD = re.compile(_SECRET_WORD, re.IGNORECASE)
# The rules below apply to one line at a time, and only to lines that hold a secret word.
_LINE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # NAME=value (environment files, shell exports), NAME in upper case: any value.
    (
        "env-secret",
        re.compile(
            rf"^(?P<head>[+\- ]?[ \t]*(?:export[ \t]+)?[A-Z0-9_]*{_SECRET_WORD.upper()}[A-Z0-9_]*"
            r"[ \t]*=[ \t]*)(?P<value>[^#]*\S)"
        ),
    ),
    # name=value in any case, when the value is a bare word (not a call or an expression).
    (
        "env-secret",
        re.compile(
            rf"(?i)^(?P<head>[+\- ]?[ \t]*(?:export[ \t]+)?[A-Z0-9_]*{_SECRET_WORD}[A-Z0-9_]*"
            r"[ \t]*=[ \t]*)(?P<value>[^\s#()\[\]{}\"',;]+)[ \t]*$"
        ),
    ),
    # key: "value" / key = 'value' / "key": "value" (code, YAML, JSON, TOML).
    (
        "secret-value",
        re.compile(
            rf"(?i)(?P<head>[\"']?[A-Za-z0-9_.\-]*{_SECRET_WORD}[A-Za-z0-9_.\-]*[\"']?\s*[:=]\s*)"
            r"(?P<quote>[\"'])(?P<value>[^\"'\n]{4,})(?P=quote)"
        ),
    ),
    # key: bare-value (YAML).
    (
        "secret-value",
        re.compile(
            rf"(?i)^(?P<head>[+\- ]?[ \t]*[A-Za-z0-9_.\-]*{_SECRET_WORD}[A-Za-z0-9_.\-]*"
            r"[ \t]*:[ \t]+)(?P<value>[A-Za-z0-9_\-+/=.]{8,})[ \t]*$"
        ),
    ),
)


def _pem(match: re.Match[str]) -> str:
    return "\n".join(REDACTED.format("private-key") for _ in match.group(0).split("\n"))


def _value(kind: str) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        value = match.group("value")
        if value.startswith("[REDACTED:"):
            return match.group(0)
        quote = match.groupdict().get("quote") or ""
        return f"{match.group('head')}{quote}{REDACTED.format(kind)}{quote}"

    return replace


_REPLACERS = tuple((pattern, _value(kind)) for kind, pattern in _LINE_RULES)


def _line(line: str) -> str:
    for pattern, replace in _REPLACERS:
        line = pattern.sub(replace, line)
    return line


def redact(text: str) -> str:
    """``text`` with every secret it contains replaced (line structure kept)."""
    if not text:
        return text
    if "PRIVATE KEY" in text:
        text = _PEM.sub(_pem, text)
    for name, prefixes, pattern in _TOKENS:
        if any(prefix in text for prefix in prefixes):
            text = pattern.sub(REDACTED.format(name), text)
    if "earer " in text or "EARER " in text:
        text = _BEARER.sub(REDACTED.format("bearer-token"), text)
    starts = sorted({text.rfind("\n", 0, m.start()) + 1 for m in _WORD.finditer(text)})
    if not starts:
        return text
    parts: list[str] = []
    done = 0
    for start in starts:
        if start < done:
            continue
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        parts += [text[done:start], _line(text[start:end])]
        done = end
    parts.append(text[done:])
    return "".join(parts)


def redact_value(value: Any) -> Any:
    """``value`` (JSON-like) with every string in it redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that redacts every record's message (and its traceback text)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True
