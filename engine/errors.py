"""The engine's error types.

All are ``ValueError`` subclasses so callers that only care about "bad input"
can catch one type; the service distinguishes them to word its replies.
"""

from __future__ import annotations


class EngineError(ValueError):
    """Base class of every error the engine raises for a caller's input."""


class InvalidSyntaxError(EngineError):
    """The input could not be read at all (``"play zz"``, ``"11h"``)."""


class IllegalActionError(EngineError):
    """The input was understood but is not allowed now.

    ``legal`` holds a short human description of what would be allowed, when known.
    """

    def __init__(self, message: str, legal: str | None = None) -> None:
        super().__init__(message)
        self.legal = legal


class AmbiguousActionError(EngineError):
    """The input matches more than one legal action (``play 7`` holding two sevens)."""

    def __init__(self, message: str, candidates: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.candidates = candidates


class ReplayError(EngineError):
    """An archive does not replay: bad format, a rejected action or a hash mismatch."""
