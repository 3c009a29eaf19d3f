"""plansmith: an MCP-native planning and orchestration engine. Plan first, then act."""

__version__ = "0.1.0"

__all__ = ["__version__"]
