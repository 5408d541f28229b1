"""Checking every stored game: it replays to its stored state, and its deals verify.

`audit_games` is what ``pbem db copy`` runs on the target after the copy, and what
``pbem player forget`` runs on the games it rewrote: each game is rebuilt from its seed
and action log (a game still waiting for its players' cuts has neither, and must have no
action), its final state hash compared with the stored one, and a finished game with a
deal proof checked by `engine.fairness.verify_archive`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlmodel import Session, col, select

from engine import EngineError
from pbem.service.admin import export
from pbem.service.context import Context, ServiceError
from pbem.store import models as m


@dataclass
class Audit:
    """What `audit_games` found: the games checked, those replayed, the deals verified,
    and one line per game that failed."""

    games: int = 0
    replayed: int = 0
    verified_games: int = 0
    deals: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def audit_games(ctx: Context, game_ids: Iterable[int] | None = None) -> Audit:
    """Replay and verify the games ``game_ids`` (all of them by default)."""
    from engine.archive import load
    from engine.dealcheck import verify_archive

    audit = Audit()
    with Session(ctx.db) as session:
        query = select(m.Game).order_by(col(m.Game.id))
        if game_ids is not None:
            query = query.where(col(m.Game.id).in_(list(game_ids)))
        rows = list(session.exec(query).all())
        session.expunge_all()
    for row in rows:
        assert row.id is not None
        audit.games += 1
        if row.seed is None:
            if row.action_count:
                audit.problems.append(f"game {row.id}: {row.action_count} moves but no seed")
            continue
        try:
            data = export(ctx, row.id)
            game = load(data)
        except (EngineError, ServiceError) as exc:
            audit.problems.append(f"game {row.id} does not replay: {exc}")
            continue
        if len(game.actions) != row.action_count or (
            row.state_hash is not None and game.state_hash() != row.state_hash
        ):
            audit.problems.append(f"game {row.id} replays to another state than the stored one")
            continue
        audit.replayed += 1
        if data.get("deal_proof") is None or row.status != m.GameStatus.FINISHED.value:
            continue
        try:
            verdict = verify_archive(data)
        except EngineError as exc:
            audit.problems.append(f"game {row.id}: its deal proof is unreadable: {exc}")
            continue
        if not verdict.ok:
            audit.problems.append(f"game {row.id}: {verdict.message}")
            continue
        audit.verified_games += 1
        audit.deals += verdict.deals
        audit.notes.extend(f"game {row.id}: {note}" for note in verdict.notes)
    return audit
