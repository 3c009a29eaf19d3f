"""Draw a tree as SVG, by hand: a rectangular phylogram rooted at the midpoint."""

from __future__ import annotations

import copy
from typing import Any
from xml.sax.saxutils import escape

__all__ = ["tree_svg"]

ROW = 22
LEFT = 20
WIDTH = 420
LABEL = 150


def tree_svg(tree: Any, *, title: str = "") -> str:
    """SVG text of ``tree`` (a Bio.Phylo tree), leaves in order, with a scale bar."""
    tree = copy.deepcopy(tree)
    if len(tree.get_terminals()) > 2:
        tree.root_at_midpoint()
    depths = tree.depths(unit_branch_lengths=not any(c.branch_length for c in tree.find_clades()))
    deepest = max(depths.values()) or 1.0
    scale = WIDTH / deepest
    top = 34 if title else 14
    ys: dict[int, float] = {}
    for i, leaf in enumerate(tree.get_terminals()):
        ys[id(leaf)] = top + i * ROW

    def y_of(clade: Any) -> float:
        if id(clade) not in ys:
            kids = [y_of(c) for c in clade.clades]
            ys[id(clade)] = (min(kids) + max(kids)) / 2
        return ys[id(clade)]

    y_of(tree.root)
    lines: list[str] = []
    for clade in tree.find_clades(order="preorder"):
        x = LEFT + depths[clade] * scale
        if clade.clades:
            kids = [ys[id(c)] for c in clade.clades]
            lines.append(_line(x, min(kids), x, max(kids)))
            lines.extend(
                _line(x, ys[id(c)], LEFT + depths[c] * scale, ys[id(c)]) for c in clade.clades
            )
        else:
            label = escape(str(clade.name))
            lines.append(f'<text x="{x + 5:.1f}" y="{ys[id(clade)] + 4:.1f}">{label}</text>')
    n = len(tree.get_terminals())
    height = top + n * ROW + 30
    bar = _scale_bar(deepest)
    bar_y = top + n * ROW + 6
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + LABEL}" '
        f'height="{height}" font-family="sans-serif" font-size="12">',
        '<rect width="100%" height="100%" fill="white"/>',
    ]
    if title:
        parts.append(f'<text x="{LEFT}" y="18" font-weight="bold">{escape(title)}</text>')
    parts.append('<g stroke="black" stroke-width="1.5" fill="none">')
    parts.extend(ln for ln in lines if ln.startswith("<line"))
    parts.append("</g>")
    parts.extend(ln for ln in lines if ln.startswith("<text"))
    parts.append(_line(LEFT, bar_y, LEFT + bar * scale, bar_y).replace("/>", ' stroke="black"/>'))
    parts.append(f'<text x="{LEFT + bar * scale + 5:.1f}" y="{bar_y + 4}">{bar:g}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _line(x1: float, y1: float, x2: float, y2: float) -> str:
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"/>'


def _scale_bar(deepest: float) -> float:
    """A round length near a fifth of the tree's depth (1, 2 or 5 times a power of ten)."""
    target = deepest / 5
    power = 10.0 ** _floor_log10(target)
    for step in (1, 2, 5, 10):
        if step * power >= target:
            return float(f"{step * power:.6g}")
    return float(f"{10 * power:.6g}")


def _floor_log10(value: float) -> int:
    exponent = 0
    if value <= 0:
        return 0
    while value >= 10:
        value /= 10
        exponent += 1
    while value < 1:
        value *= 10
        exponent -= 1
    return exponent
