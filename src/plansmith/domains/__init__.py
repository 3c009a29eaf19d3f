"""Shipped domains and their MCP servers (lab, bio, research, code)."""

__all__: list[str] = []
