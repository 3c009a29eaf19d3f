"""Independent computations the bio tests check the server against: plain Python, no
Biopython, no aligner. Imported by the test modules next to it."""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "brute_force_orfs",
    "best_ungapped_identity",
    "gc_percent",
    "genbank_sequence",
    "fasta_sequences",
]

STOPS = {"TAA", "TAG", "TGA"}
PAIR = {"A": "T", "C": "G", "G": "C", "T": "A"}


def brute_force_orfs(seq: str, min_length: int) -> set[tuple[int, int, int]]:
    """(strand, start, end) of every ATG..stop whose ATG is the first in frame after a stop."""
    found: dict[tuple[int, int, int], int] = {}
    size = len(seq)
    for strand, s in ((1, seq), (-1, "".join(PAIR[b] for b in reversed(seq)))):
        for i in range(size - 2):
            if s[i : i + 3] != "ATG":
                continue
            j = i
            while j + 3 <= size and s[j : j + 3] not in STOPS:
                j += 3
            if j + 3 > size:
                continue  # no stop: not a complete ORF
            key = (strand, i % 3, j)  # one ORF per in-frame stop: keep the most upstream ATG
            found[key] = min(found.get(key, i), i)
    out: set[tuple[int, int, int]] = set()
    for (strand, _, stop), start in found.items():
        lo, hi = start, stop + 3
        if hi - lo < min_length:
            continue
        out.add((strand, lo, hi) if strand == 1 else (strand, size - hi, size - lo))
    return out


def best_ungapped_identity(query: str, subject: str) -> tuple[float, int]:
    """Over every diagonal, the maximal-scoring ungapped segment (+2/-3, Kadane): its
    identity in percent (3 decimals) and its length."""
    best = (0, 0.0, 0)
    for offset in range(-len(subject) + 1, len(query)):
        score = matches = length = 0
        for i in range(max(0, offset), min(len(query), len(subject) + offset)):
            same = query[i] == subject[i - offset]
            if score <= 0:
                score = matches = length = 0
            score += 2 if same else -3
            matches += same
            length += 1
            if score > best[0]:
                best = (score, 100.0 * matches / length, length)
    return round(best[1], 3), best[2]


def gc_percent(seq: str) -> float:
    return 100.0 * (seq.count("G") + seq.count("C")) / len(seq)


def genbank_sequence(path: Path) -> str:
    """The sequence of a GenBank flat file: the letters after ORIGIN, up to //."""
    text = path.read_text()
    origin = text[text.index("\nORIGIN") + 7 : text.index("\n//")]
    return "".join(ch for ch in origin if ch.isalpha()).upper()


def fasta_sequences(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    name = ""
    for line in path.read_text().splitlines():
        if line.startswith(">"):
            name = line[1:].split()[0]
            out[name] = ""
        elif line.strip():
            out[name] += line.strip().upper()
    return out
