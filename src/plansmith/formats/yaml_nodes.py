"""Reading YAML with locations, for the readers of other layers (bindings, servers files):
the node helpers the formats' own readers use, so that every file reports its errors
the same way (file:line, a hint, "did you mean")."""

from plansmith.formats._yaml_node import (
    Fields,
    Source,
    compose,
    did_you_mean,
    fields,
    is_null,
    mapping,
    name,
    number,
    sequence,
)

__all__ = [
    "Fields",
    "Source",
    "compose",
    "did_you_mean",
    "fields",
    "is_null",
    "mapping",
    "name",
    "number",
    "sequence",
]
