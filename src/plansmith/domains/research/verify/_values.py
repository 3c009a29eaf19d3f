"""Values in evidence text: dates, version strings and numbers with units.

Each finder returns the values it recognises with their character span, so a
claim can point at the exact words it rests on. Values are normalised so that
two sources can be compared: a date keeps its precision (year, month, day), a
version its numeric parts, a quantity its value in the base unit of its
dimension (seconds, bytes, ratio, hertz).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from plansmith.domains.research.verify._words import word_set

__all__ = [
    "DateValue",
    "VersionValue",
    "Quantity",
    "find_dates",
    "find_versions",
    "find_quantities",
    "find_counts",
    "parse_date",
]

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:1[6-9]|2\d)\d{2})"
_DATE_PATTERNS = (
    re.compile(r"\b(?P<year>\d{4})-(?P<mnum>\d{2})-(?P<day>\d{2})\b"),
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_DAY}\s+{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(r"\b(?P<year>\d{4})-(?P<mnum>0[1-9]|1[0-2])\b(?!-\d)"),
    re.compile(rf"\b(?:in|since|until|by|from)\s+{_YEAR}\b(?!\.\d)", re.IGNORECASE),
)


@dataclass(frozen=True, slots=True)
class DateValue:
    """A calendar date with its precision: ``month`` and ``day`` may be unknown."""

    year: int
    month: int | None = None
    day: int | None = None
    start: int = -1
    end: int = -1

    @property
    def iso(self) -> str:
        """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``."""
        text = f"{self.year:04d}"
        if self.month is not None:
            text += f"-{self.month:02d}"
            if self.day is not None:
                text += f"-{self.day:02d}"
        return text

    def compatible(self, other: DateValue) -> bool:
        """Equal on the precision both have ("October 2021" fits "2021-10-04")."""
        if self.year != other.year:
            return False
        if self.month is None or other.month is None:
            return True
        if self.month != other.month:
            return False
        return self.day is None or other.day is None or self.day == other.day

    def first_day(self) -> dt.date:
        """The earliest day the value can mean (for freshness checks)."""
        return dt.date(self.year, self.month or 1, self.day or 1)


def _make_date(year: int, month: int | None, day: int | None) -> bool:
    try:
        dt.date(year, month or 1, day or 1)
    except ValueError:
        return False
    return 1600 <= year <= 2999


def find_dates(text: str) -> list[DateValue]:
    """Every date in ``text``, longest match first where two patterns overlap."""
    found: list[DateValue] = []
    taken: list[tuple[int, int]] = []
    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            span = m.span()
            if any(span[0] < e and s < span[1] for s, e in taken):
                continue
            groups = m.groupdict()
            year = int(groups["year"])
            month: int | None = None
            if groups.get("mnum"):
                month = int(groups["mnum"])
            elif groups.get("month"):
                month = _MONTHS[groups["month"].lower()]
            day = int(groups["day"]) if groups.get("day") else None
            if not _make_date(year, month, day):
                continue
            start = m.start("year") if pattern is _DATE_PATTERNS[-1] else span[0]
            taken.append(span)
            found.append(DateValue(year, month, day, start, span[1]))
    return sorted(found, key=lambda d: d.start)


def parse_date(text: str | None) -> DateValue | None:
    """The first date in ``text`` (an ISO date, "October 4, 2021", ...), or None."""
    if not text:
        return None
    dates = find_dates(text)
    return dates[0] if dates else None


@dataclass(frozen=True, slots=True)
class VersionValue:
    """A version string: its numeric parts, and the word before it (``Python``, ``version``)."""

    parts: tuple[int, ...]
    prefix: str = ""
    start: int = -1
    end: int = -1

    @property
    def text(self) -> str:
        return ".".join(str(p) for p in self.parts)

    def compatible(self, other: VersionValue) -> bool:
        """Equal, or one is a prefix of the other ("3.11" fits "3.11.2")."""
        n = min(len(self.parts), len(other.parts))
        return self.parts[:n] == other.parts[:n]


_VERSION_PREFIXED = re.compile(
    r"\b(?P<prefix>version|versions|release|python|sqlite|openssl|tcl/tk|tk|unicode|v)"
    r"\s*(?P<num>\d+(?:\.\d+){1,3})(?![.\d]*\d)",
    re.IGNORECASE,
)
_VERSION_BARE = re.compile(r"(?<![\w.])(?P<num>\d+\.\d+\.\d+)(?![.\d]*\d)(?!\.\w)")


def find_versions(text: str) -> list[VersionValue]:
    """Version strings: after a word that announces one ("version 3.8", "Python 3.9",
    "v1.2"), or bare with three parts ("3.11.2")."""
    found: list[VersionValue] = []
    taken: list[tuple[int, int]] = []
    for m in _VERSION_PREFIXED.finditer(text):
        parts = tuple(int(p) for p in m.group("num").split("."))
        prefix = m.group("prefix")
        found.append(VersionValue(parts, prefix, m.start("num"), m.end("num")))
        taken.append(m.span("num"))
    for m in _VERSION_BARE.finditer(text):
        if any(m.start() < e and s < m.end() for s, e in taken):
            continue
        parts = tuple(int(p) for p in m.group("num").split("."))
        found.append(VersionValue(parts, "", m.start(), m.end()))
    return sorted(found, key=lambda v: v.start)


# unit -> (dimension, factor to the dimension's base unit)
_UNITS: dict[str, tuple[str, float]] = {
    "ns": ("time", 1e-9), "nanoseconds": ("time", 1e-9), "nanosecond": ("time", 1e-9),
    "µs": ("time", 1e-6), "us": ("time", 1e-6), "microseconds": ("time", 1e-6),
    "microsecond": ("time", 1e-6),
    "ms": ("time", 1e-3), "milliseconds": ("time", 1e-3), "millisecond": ("time", 1e-3),
    "s": ("time", 1.0), "sec": ("time", 1.0), "secs": ("time", 1.0), "seconds": ("time", 1.0),
    "second": ("time", 1.0), "min": ("time", 60.0), "mins": ("time", 60.0),
    "minutes": ("time", 60.0), "minute": ("time", 60.0), "h": ("time", 3600.0),
    "hours": ("time", 3600.0), "hour": ("time", 3600.0), "days": ("time", 86400.0),
    "day": ("time", 86400.0),
    "bytes": ("size", 1.0), "byte": ("size", 1.0), "b": ("size", 1.0),
    "kb": ("size", 1e3), "kib": ("size", 1024.0), "mb": ("size", 1e6),
    "mib": ("size", 1024.0**2), "gb": ("size", 1e9), "gib": ("size", 1024.0**3),
    "tb": ("size", 1e12), "tib": ("size", 1024.0**4),
    "bits": ("bits", 1.0), "bit": ("bits", 1.0),
    "%": ("ratio", 0.01), "percent": ("ratio", 0.01),
    "hz": ("frequency", 1.0), "khz": ("frequency", 1e3), "mhz": ("frequency", 1e6),
    "ghz": ("frequency", 1e9),
}  # fmt: skip
_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90, "hundred": 100,
}  # fmt: skip
_UNIT = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True) if u != "%")
_QUANTITY = re.compile(
    r"(?<![\w.])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|"
    + "|".join(_WORDS)
    + rf")(?:\s*(?P<pct>%)|[\s-]*(?P<unit>{_UNIT})\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number with a unit; ``base`` is the value in the dimension's base unit."""

    value: float
    unit: str
    dimension: str
    base: float
    start: int = -1
    end: int = -1

    def compatible(self, other: Quantity) -> bool:
        """Same dimension and the same amount (to a relative 1e-9)."""
        if self.dimension != other.dimension:
            return False
        scale = max(abs(self.base), abs(other.base), 1e-300)
        return abs(self.base - other.base) <= 1e-9 * scale

    @property
    def text(self) -> str:
        number = f"{self.value:g}"
        return f"{number}{self.unit}" if self.unit == "%" else f"{number} {self.unit}"


def find_quantities(text: str) -> list[Quantity]:
    """Numbers followed by a known unit ("5 seconds", "32 MiB", "1.5 ms", "five seconds")."""
    found: list[Quantity] = []
    for m in _QUANTITY.finditer(text):
        raw = m.group("num").lower()
        value = float(_WORDS[raw]) if raw in _WORDS else float(raw.replace(",", ""))
        unit = "%" if m.group("pct") else m.group("unit")
        dimension, factor = _UNITS[unit.lower()]
        if unit.lower() == "b" and unit != "B":
            continue  # a lone lower-case "b" is not a byte
        found.append(Quantity(value, unit, dimension, value * factor, m.start(), m.end()))
    return found


#: plural nouns that follow a number without being what is counted
_NOT_COUNTED = word_set(
    """times ways cases examples items things parts steps lines pages chapters sections
    years months weeks others ones arguments args parameters values bytes bits seconds
    minutes hours days characters chars digits places levels"""
)
_COUNT = re.compile(
    r"(?<![\w.,])(?P<num>\d{1,3}(?:,\d{3})+|\d+|"
    + "|".join(_WORDS)
    + r")(?:\s+(?:concurrent|parallel|simultaneous|worker|active|open|max(?:imum)?))?"
    r"\s+(?P<noun>[a-z][a-z-]{2,}s)\b",
    re.IGNORECASE,
)


def find_counts(text: str) -> list[Quantity]:
    """Counts of things: a number and a plural noun ("64 workers", "1,024 connections",
    "sixteen threads"); the dimension is ``count:<noun>``, the unit the noun."""
    found: list[Quantity] = []
    for m in _COUNT.finditer(text):
        noun = m.group("noun").lower()
        if noun in _NOT_COUNTED or noun in _UNITS:
            continue
        raw = m.group("num").lower()
        value = float(_WORDS[raw]) if raw in _WORDS else float(raw.replace(",", ""))
        found.append(Quantity(value, noun, f"count:{noun}", value, m.start(), m.end()))
    return found
