"""Standings: the rating model against its published formulas, teams and free-for-all
ranks, computer pseudo-players, statistics from engine events, and the HTML output."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from engine import Game, Settings
from pbem.ratings import (
    GameRecord,
    Place,
    compute_standings,
    computer_key,
    cribs_of,
    points_of,
    ranks_of,
    record_of,
)
from pbem.render.standings import render_standings, standings_data, standings_page, text_table
from tests.engine.helpers import play_out

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ANN, BEN, CAT, DAN = (Place(f"{n}@x.test", n.title()) for n in ("ann", "ben", "cat", "dan"))


def record(
    game_id: int,
    places: tuple[Place, ...],
    scores: tuple[int, ...],
    winner: int,
    *,
    sides: tuple[tuple[int, ...], ...] | None = None,
    values: dict[int, int] | None = None,
    when: datetime | None = None,
) -> GameRecord:
    sides = sides or tuple((s,) for s in range(len(places)))
    return GameRecord(
        game_id=game_id,
        finished_at=when or T0 + timedelta(hours=game_id),
        places=places,
        sides=sides,
        scores=scores,
        winner=winner,
        values=values or {s: 1 for s in range(len(sides)) if s != winner},
        hands=4,
        points=tuple({"pegging": 4, "hand": 20, "crib": 4} for _ in places),
        cribs=tuple(2 for _ in places),
    )


def plackett_luce_two(mu: float = 25.0, sigma: float = 25 / 3) -> tuple[float, float, float]:
    """One game between two new players by the formulas of Weng & Lin (2011),
    Algorithm 4 (Plackett–Luce), with openskill's defaults written out: beta = sigma/2,
    tau = mu/300 added to sigma first, gamma = sigma_i / c, kappa = 0.0001.

    Returns (winner's mu, loser's mu, both sigmas)."""
    beta, tau = 25 / 6, 25 / 300
    s2 = sigma**2 + tau**2
    c = math.sqrt(2 * (s2 + beta**2))
    # Both teams are in C_1 (ranked at or below the winner); equal mus give p = 1/2.
    p = math.exp(mu / c) / (math.exp(mu / c) + math.exp(mu / c))
    omega_winner = s2 / c * (1 - p)
    # The loser sums over q=1 (C_1 = both: 0 - p) and q=2 (C_2 = itself alone: 1 - 1).
    omega_loser = s2 / c * ((0 - p) + (1 - 1.0))
    gamma = math.sqrt(s2) / c
    delta_winner = gamma * s2 / c**2 * p * (1 - p)
    delta_loser = gamma * s2 / c**2 * (p * (1 - p) + 1.0 * (1 - 1.0))
    assert math.isclose(delta_winner, delta_loser)
    new_sigma = math.sqrt(s2) * math.sqrt(max(1 - delta_winner, 0.0001))
    return mu + omega_winner, mu + omega_loser, new_sigma


def test_one_game_matches_the_published_formulas() -> None:
    won_mu, lost_mu, sigma = plackett_luce_two()
    # The numbers worked out by hand, for the record.
    assert won_mu == pytest.approx(27.635389, abs=1e-6)
    assert sigma == pytest.approx(8.065901, abs=1e-6)
    table = compute_standings([record(1, (ANN, BEN), (61, 40), 0)])
    ann, ben = table.row(ANN.key), table.row(BEN.key)
    assert ann is not None and ben is not None
    assert ann.mu == pytest.approx(won_mu, abs=1e-9)
    assert ben.mu == pytest.approx(lost_mu, abs=1e-9)
    assert ann.sigma == pytest.approx(sigma, abs=1e-9)
    assert ben.sigma == pytest.approx(sigma, abs=1e-9)
    assert ann.rating == pytest.approx(won_mu - 3 * sigma)
    assert [r.key for r in table.rows] == [ANN.key, BEN.key]
    assert (ann.games, ann.wins, ben.games, ben.wins) == (1, 1, 1, 0)


def test_partnerships_rate_as_teams() -> None:
    four = record(1, (ANN, BEN, CAT, DAN), (121, 100), 0, sides=((0, 2), (1, 3)))
    table = compute_standings([four])
    ann, cat, ben, dan = (table.row(p.key) for p in (ANN, CAT, BEN, DAN))
    assert ann and cat and ben and dan
    assert ann.mu == pytest.approx(cat.mu) and ann.mu > 25 > ben.mu
    assert ben.mu == pytest.approx(dan.mu)
    assert ann.wins == cat.wins == 1 and ben.wins == dan.wins == 0


def test_three_players_rank_by_score_and_ties_share() -> None:
    assert ranks_of(record(1, (ANN, BEN, CAT), (121, 90, 100), 0)) == [1, 3, 2]
    assert ranks_of(record(1, (ANN, BEN, CAT), (95, 121, 95), 1)) == [2, 1, 2]
    table = compute_standings([record(1, (ANN, BEN, CAT), (121, 90, 100), 0)])
    assert [r.key for r in table.rows] == [ANN.key, CAT.key, BEN.key]


def test_computer_levels_are_pseudo_players() -> None:
    robot = Place(computer_key("good"), "Computer (good)", computer=True)
    games = [
        record(1, (ANN, robot), (61, 30), 0, values={1: 2}),
        record(2, (BEN, robot), (50, 61), 1),
    ]
    table = compute_standings(games)
    row = table.row("computer:good")
    assert row is not None and row.games == 2 and row.wins == 1 and row.computer
    ann = table.row(ANN.key)
    assert ann is not None and ann.skunks == 1
    assert row.skunked == 1


def test_the_order_is_by_end_time_then_id_whatever_the_input_order() -> None:
    games = [
        record(2, (ANN, BEN), (61, 50), 0, when=T0),
        record(1, (ANN, BEN), (40, 61), 1, when=T0),
        record(3, (BEN, CAT), (61, 10), 0, when=T0 - timedelta(days=1)),
    ]
    one = compute_standings(games).to_json()
    two = compute_standings(list(reversed(games))).to_json()
    assert one == two
    assert one["games"] == 3


def test_points_per_hand_come_from_the_engine_events() -> None:
    game = play_out(Game(Settings(players=2, target=61), "stats"))
    points = points_of(game)
    shows = sum(e.points for e in game.events if e.kind == "show")
    assert sum(p["hand"] + p["crib"] for p in points) == shows
    total = sum(sum(p.values()) for p in points)
    assert total == sum(game.scores)  # no muggins: every point is one of the three kinds
    rec = record_of(7, T0, game, (ANN, BEN))
    row = compute_standings([rec]).row(ANN.key)
    assert row is not None and row.hands == game.hand_no
    assert row.per_hand("hand") == pytest.approx(points[0]["hand"] / game.hand_no)
    with pytest.raises(ValueError, match="not over"):
        record_of(8, T0, Game(Settings(players=2), "x"), (ANN, BEN))


def test_html_escapes_names_and_the_mail_shows_the_askers_line() -> None:
    evil = Place("evil@x.test", "<script>alert(1)</script>")
    games = [record(i, (ANN, BEN), (61, 50), 0) for i in range(1, 4)]
    games.append(record(9, (evil, CAT), (10, 61), 1))
    made = standings_data(games)
    assert "<script>" not in made.html and "&lt;script&gt;" in made.html
    assert made.data["players"][0]["key"] == ANN.key
    assert "<table" in standings_page(games)
    table = compute_standings(games)
    mail = render_standings(table, "evil@x.test", top=1)
    assert "Ann" in mail.text and "script" in mail.text  # the asker's own line
    assert "<script>" not in mail.html
    assert "Ben" not in mail.text.split("each on average.")[-1].split("--")[0]
    # Plain words: no model's name or formula in a player's mail.
    for word in ("mu", "σ", "OpenSkill", "Plackett"):
        assert word not in mail.text.split(), word
    assert "Plackett" not in mail.text and "3σ" not in mail.text
    assert "The rating rises as you win" in " ".join(mail.text.split())
    nobody = render_standings(table, "new@x.test", top=2)
    assert "not in the table yet" in nobody.text
    assert text_table(table.rows).splitlines()[0].startswith("#")


def test_the_crib_is_averaged_per_crib_owned_not_per_hand() -> None:
    """A player owns the crib one hand in two (three, four): its points are averaged
    over the cribs the player owned and that were counted, the hand and the pegging
    over every hand."""
    game = play_out(Game(Settings(players=2, target=121), "cribs"))
    counted = [
        sum(1 for e in game.events if e.kind == "show" and e.detail == "crib" and e.seat == seat)
        for seat in range(2)
    ]
    assert cribs_of(game) == tuple(counted)
    assert sum(counted) < game.hand_no * 2  # fewer cribs than hands played by each
    rec = record_of(3, T0, game, (ANN, BEN))
    table = compute_standings([rec])
    for seat, place in enumerate((ANN, BEN)):
        row = table.row(place.key)
        assert row is not None and row.cribs == counted[seat]
        crib = points_of(game)[seat]["crib"]
        assert row.average("crib") == pytest.approx(crib / counted[seat])
        assert row.average("hand") == pytest.approx(row.per_hand("hand"))
        line = next(r for r in text_table(table.rows).splitlines()[1:] if place.name in r)
        assert line.split()[-1] == f"{crib / counted[seat]:.2f}"
        data = row.to_json()
        assert data["cribs"] == counted[seat]
        assert data["per_crib"] == pytest.approx(crib / counted[seat], abs=1e-3)
        assert "crib" not in data["per_hand"]
    two = record(1, (ANN, BEN), (61, 50), 0)  # 4 hands, 2 cribs each, 4 crib points
    assert compute_standings([two]).rows[0].average("crib") == pytest.approx(2.0)
