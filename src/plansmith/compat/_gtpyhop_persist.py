"""GTPyhop's session files: ``SessionSerializer``, ``SESSION_SCHEMA_VERSION``,
``SessionPersistenceError``, in GTPyhop 2.0.2's layout (schema 1), so that files
written by either are read by both."""

from __future__ import annotations

import json
import pickle
import time
from typing import Any

__all__ = ["SESSION_SCHEMA_VERSION", "SessionPersistenceError", "SessionSerializer"]

#: The layout of a session file (GTPyhop 2.0.2's).
SESSION_SCHEMA_VERSION = "1"

#: Package versions stamped by releases that wrote no ``schema_version`` (schema 1).
_LEGACY_SESSION_VERSIONS = ("1.", "2.0.")

_REQUIRED = ("session_id", "verbose", "recursive", "created_at", "stats")


class SessionPersistenceError(Exception):
    """A session could not be written or read."""


class SessionSerializer:
    """Session data to bytes and back ('json' or 'pickle')."""

    @staticmethod
    def serialize_session(session: Any, format: str = "json") -> bytes:
        try:
            data = {
                "session_id": session.session_id,
                "verbose": session.verbose,
                "recursive": session.recursive,
                # None: the session chose none (GTPyhop reads it as its default)
                "strategy": session._strategy
                if getattr(session, "_strategy_chosen", True)
                else None,
                "structured_logging": session.structured_logging,
                "auto_cleanup": session.auto_cleanup,
                "created_at": session._created_at,
                "last_used": session._last_used,
                "stats": dict(session._stats),
                "domain_name": session.domain.__name__ if session.domain else None,
                "schema_version": SESSION_SCHEMA_VERSION,
                "version": "2.0.2",
                "timestamp": time.time(),
            }
            if format == "json":
                return json.dumps(data, indent=2).encode("utf-8")
            if format == "pickle":
                return pickle.dumps(data)
            raise ValueError(f"Unsupported format: {format}")
        except Exception as error:
            raise SessionPersistenceError(
                f"Failed to serialize session {session.session_id}: {error}"
            ) from error

    @staticmethod
    def deserialize_session(data: bytes, format: str = "json") -> dict[str, Any]:
        try:
            if format == "json":
                found = json.loads(data.decode("utf-8"))
            elif format == "pickle":
                found = pickle.loads(data)
            else:
                raise ValueError(f"Unsupported format: {format}")
            for name in _REQUIRED:
                if name not in found:
                    raise ValueError(f"Missing required field: {name}")
            return dict(found)
        except Exception as error:
            raise SessionPersistenceError(f"Failed to deserialize session data: {error}") from error

    @staticmethod
    def validate_session_data(session_data: dict[str, Any]) -> bool:
        """Whether the data is a schema-1 session with the required fields and stats."""
        try:
            schema = session_data.get("schema_version")
            if schema is not None:
                if str(schema) != SESSION_SCHEMA_VERSION:
                    return False
            elif not str(session_data.get("version", "1.0.0")).startswith(_LEGACY_SESSION_VERSIONS):
                return False
            types: tuple[tuple[str, type | tuple[type, ...]], ...] = (
                ("session_id", str),
                ("verbose", int),
                ("recursive", bool),
                ("created_at", (int, float)),
                ("stats", dict),
            )
            if not all(isinstance(session_data.get(k), t) for k, t in types):
                return False
            stats = session_data["stats"]
            return all(
                isinstance(stats.get(k), int | float)
                for k in ("plans_generated", "total_planning_time_ms", "errors")
            )
        except Exception:
            return False
