"""Compatibility modules: other planners' APIs, run by plansmith.

``plansmith.compat.gtpyhop`` provides GTPyhop 2.0.2's API, so that GTPyhop
domain packages plan under plansmith unchanged.
"""

from plansmith.compat import gtpyhop

__all__ = ["gtpyhop"]
