"""The redaction policy of finished games (`race.redaction`), called directly on results
made by `race.results.build_results`: everything under `FULL`; under `AS_PLAYED` (a
daily game of an open day) no seed, deal or record, and every view of every board,
final view, replay start and each step, exactly as its own player saw it then."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from klondike_live.client import apply_diff, view_from_wire
from klondike_live.engine import ALL_CARDS, Board, Deal, Move, Variant, view_of
from klondike_live.protocol.kinds import RoomKind
from klondike_live.protocol.outgoing import view_wire
from klondike_live.race.redaction import (
    SECRETS,
    Disclosure,
    disclosure,
    replay_for,
    results_for,
)
from klondike_live.race.results import build_results
from klondike_live.race.room import FINISHED, commitment, new_room
from klondike_live.race.status import BoardStatus

SEED = "redaction-policy-test-seed-0001"
choices = st.lists(st.integers(0, 10_000), max_size=60)


def game(picks: Sequence[int]) -> list[str]:
    """Move tokens of a legal game from the deal of `SEED`, one pick per move."""
    board = Board.from_seed(SEED)
    tokens = []
    for pick in picks:
        legal = [m for m in board.legal_moves() if isinstance(m, Move)]
        if not legal:
            break
        move = legal[pick % len(legal)]
        board.push(move)
        tokens.append(str(move))
    return tokens


def boards_after(tokens: Sequence[str]) -> list[Board]:
    """The board after each prefix of `tokens` (copies), from the dealt board on."""
    board = Board.from_seed(SEED)
    out = [board.copy()]
    for token in tokens:
        board.push(Move.parse(token))
        out.append(board.copy())
    return out


def finished(games: Sequence[Sequence[str]], *, daily: bool) -> dict[str, Any]:
    """The stored results of a finished game: one resigned board per game."""
    kind = RoomKind.DAILY if daily else RoomKind.RACE
    state = new_room(
        "room-0001",
        kind=kind,
        variant=Variant(),
        capacity=len(games),
        time_limit=0,
        public=False,
        host="u0",
        host_name="P0",
        now_ms=0,
        daily="2030-01-01" if daily else "",
        ranked=daily,
    )
    for seat in range(1, len(games)):
        state = state.join(f"u{seat}", f"P{seat}")
    state = replace(
        state,
        state=FINISHED,
        seed=SEED,
        commitment=commitment(Deal.from_seed(SEED)),
        start_at_ms=1_000,
        ended_ms=9_000,
    )
    boards = {
        seat: (
            {"status": str(BoardStatus.RESIGNED), "finish_ms": "5000"},
            list(tokens),
            [10 * (i + 1) for i in range(len(tokens))],
        )
        for seat, tokens in enumerate(games)
    }
    return build_results(state, boards)


def cards(view: dict[str, Any]) -> set[int]:
    shown = {c for _, pile in view["tableau"] for c in pile if c >= 0}
    shown |= {c for c in view["waste"] if c >= 0}
    return shown | {s * 13 + r for s, n in enumerate(view["foundations"]) for r in range(n)}


def diff_cards(diff: dict[str, Any]) -> set[int]:
    shown = {c for _, _, _, added in diff["piles"] for c in added if c >= 0}
    foundations = diff.get("foundations", [])
    return shown | {s * 13 + r for s, n in enumerate(foundations) for r in range(n)}


def mask_set(mask: int) -> set[int]:
    return {c for c in range(52) if mask >> c & 1}


def test_as_played_only_for_a_daily_game_while_its_day_is_open() -> None:
    assert disclosure(daily=True, day_open=True) is Disclosure.AS_PLAYED
    assert disclosure(daily=True, day_open=False) is Disclosure.FULL
    assert disclosure(daily=False, day_open=True) is Disclosure.FULL
    assert disclosure(daily=False, day_open=False) is Disclosure.FULL


def test_full_shows_a_finished_race_whole() -> None:
    """A race's results unchanged; its replay with seed and deal, every card from the
    dealt board on, its steps rebuilding each full final view."""
    picks = [game(range(40)), game(range(3, 30, 2))]
    results = finished(picks, daily=False)
    assert results_for(results, Disclosure.FULL) == results
    replay = replay_for("room-0001", RoomKind.RACE, results, Disclosure.FULL)
    assert set(replay) == {
        "room",
        "gen",
        "kind",
        "variant",
        "seed",
        "deal",
        "commitment",
        "started_at",
        "ended_at",
        "from",
        "boards",
    }
    assert replay["from"] == 0
    assert replay["seed"] == SEED and replay["deal"] == str(Deal.from_seed(SEED))
    full_start = view_wire(view_of(Board.from_seed(SEED), ALL_CARDS))
    rows = {row["seat"]: row for row in results["ranking"]}
    for board in replay["boards"]:
        assert board["start"] == full_start
        view = view_from_wire(Variant(), board["start"])
        for step in board["steps"]:
            view = apply_diff(view, step["d"])
        assert view_wire(view) == rows[board["seat"]]["view"]
        assert len(view.cards()) + view.stock == 52


def test_as_played_keeps_every_stored_field_but_the_secrets() -> None:
    """The allow-lists cover today's results: only seed, deal and records go (a field
    added to the stored results fails here until the policy decides about it)."""
    results = finished([game(range(20))], daily=True)
    shown = results_for(results, Disclosure.AS_PLAYED)
    assert set(shown) == set(results) - set(SECRETS)
    for row, full in zip(shown["ranking"], results["ranking"], strict=True):
        assert set(row) == set(full) - {"record"}
        assert {k: v for k, v in row.items() if k != "view"} == {
            k: v for k, v in full.items() if k not in ("view", "record")
        }
    assert shown["daily"]["closed"] is False
    assert results_for(results, Disclosure.FULL)["daily"]["closed"] is True
    replay = replay_for("room-0001", RoomKind.DAILY, results, Disclosure.AS_PLAYED)
    full = replay_for("room-0001", RoomKind.DAILY, results, Disclosure.FULL)
    assert set(replay) == set(full) - set(SECRETS)
    assert replay["daily"]["closed"] is False and full["daily"]["closed"] is True
    for board, whole in zip(replay["boards"], full["boards"], strict=True):
        assert set(board) == set(whole)
        assert [s["m"] for s in board["steps"]] == [s["m"] for s in whole["steps"]]
        assert [s["t"] for s in board["steps"]] == [s["t"] for s in whole["steps"]]


@settings(max_examples=25, deadline=None)
@given(choices, choices)
def test_as_played_shows_each_board_exactly_as_its_player_saw_it(
    first: list[int], second: list[int]
) -> None:
    """Every view shown under `AS_PLAYED` is the board's own player's view at that
    point: the final view, the replay's start (the seven up-cards) and each step; the
    steps applied to the start give the final view."""
    games = [game(first), game(second)]
    results = finished(games, daily=True)
    shown = results_for(results, Disclosure.AS_PLAYED)
    replay = replay_for("room-0001", RoomKind.DAILY, results, Disclosure.AS_PLAYED)
    assert SEED not in repr(shown) and SEED not in repr(replay)
    rows = {row["seat"]: row for row in shown["ranking"]}
    for board in replay["boards"]:
        seat = board["seat"]
        states = boards_after(games[seat])
        assert board["start"] == view_wire(view_of(states[0], states[0].seen))
        assert len(cards(board["start"])) == 7
        view = view_from_wire(Variant(), board["start"])
        for index, step in enumerate(board["steps"]):
            seen = states[index + 1].seen
            assert diff_cards(step["d"]) <= mask_set(seen)
            view = apply_diff(view, step["d"])
            assert view == view_of(states[index + 1], seen)
        final = states[-1]
        assert view == view_of(final, final.seen)
        assert rows[seat]["view"] == view_wire(view)
        assert cards(rows[seat]["view"]) <= mask_set(final.seen)
