"""A run's events in memory, for the views: the engine's ``RunFeed`` (loaded from the
log, then pushed live, and the run's view moved on by each of them)."""

from plansmith.engine import RunFeed as Feed

__all__ = ["Feed"]
