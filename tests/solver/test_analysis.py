"""Per-ply analysis (`solver.analysis`) and the `analyse` subcommand."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import pytest

from klondike_live.engine import Board, Deal, GameRecord, Variant
from klondike_live.solver.analysis import (
    CERTIFICATE,
    LOST,
    UNKNOWN,
    WINNABLE,
    Analysis,
    AnalysisBudget,
    analyse,
    lost_at,
    play_prefix,
    positions,
)
from klondike_live.solver.analysis_cli import add_parser
from klondike_live.solver.search import UNSOLVABLE, Budget, solve
from klondike_live.solver.selfplay import play_game

DATA = Path(__file__).parent.parent / "data"
WON = sorted(DATA.glob("won-*.txt"))
SMALL = AnalysisBudget(per_position=0.5, total=4.0)


def replays_to_win(board: Board, line: tuple[str, ...] | None) -> bool:
    """`line` replays from `board` through the checked `Board.play` to a won game."""
    assert line is not None
    replay = board.copy()
    for token in line:
        replay.play(token)
    return replay.is_won()


def check_consistent(record: GameRecord, result: Analysis) -> None:
    """Every property an analysis must have, whatever the budget gave."""
    boards, _ = positions(record)
    verdicts = [p.verdict for p in result.plies]
    assert [p.ply for p in result.plies] == list(range(len(record.moves) + 1))
    for ply in result.plies:
        if ply.verdict == WINNABLE:
            assert replays_to_win(boards[ply.ply], ply.line), f"ply {ply.ply}"
        else:
            assert ply.line is None
    # Winnable plies come first, lost ones last: a lost position never leads back to a
    # winnable one, and a winnable one is preceded by winnable ones.
    if LOST in verdicts:
        first = verdicts.index(LOST)
        assert all(v == LOST for v in verdicts[first:])
    if WINNABLE in verdicts:
        last = len(verdicts) - 1 - verdicts[::-1].index(WINNABLE)
        assert all(v == WINNABLE for v in verdicts[: last + 1])
    if result.lost_at is None:
        assert not any(
            verdicts[k] == LOST and verdicts[k - 1] == WINNABLE for k in range(1, len(verdicts))
        )
    else:
        assert verdicts[result.lost_at] == LOST and verdicts[result.lost_at - 1] == WINNABLE


@pytest.mark.parametrize("path", WON, ids=lambda p: p.name)
def test_won_records_are_winnable_at_every_ply(path: Path) -> None:
    """On a won game every ply is winnable, and each ply's line wins from there."""
    record = GameRecord.parse(path.read_text())
    result = analyse(record, SMALL)
    assert all(p.verdict == WINNABLE for p in result.plies)
    assert result.lost_at is None
    check_consistent(record, result)


@pytest.mark.parametrize("variant", [Variant(1, 1), Variant(3, 3)], ids=str)
def test_played_games_are_consistent(variant: Variant) -> None:
    """Games played by the heuristic with mistakes (won and lost): lines win, verdicts
    are ordered, lost_at sits between a winnable and a lost ply."""
    rng = random.Random(12)
    seen: set[str] = set()
    for n in range(4):
        record = play_game(f"an{n}", variant, rng, max_moves=120)
        result = analyse(record, SMALL)
        check_consistent(record, result)
        seen |= {p.verdict for p in result.plies}
        if record.result == "won":
            assert all(p.verdict == WINNABLE for p in result.plies)
    assert LOST in seen  # the games thrown away end lost, and that is proven


def test_lost_at_is_found_and_proven() -> None:
    """A game that throws away a winnable deal: lost_at names the ply after the losing
    move; the ply before it is winnable and the ply itself is proven lost by a search
    with no reductions but the certificate-grade ones."""
    rng = random.Random(3)
    for n in range(40):
        record = play_game(f"lose{n}", Variant(3, 3), rng, mistakes=0.5, max_moves=80)
        result = analyse(record, SMALL)
        if result.lost_at is not None:
            break
    else:
        pytest.fail("no game with a losing move among 40")
    check_consistent(record, result)
    boards, _ = positions(record)
    k = result.lost_at
    assert solve(boards[k], Budget(seconds=20), CERTIFICATE).result == UNSOLVABLE
    assert result.plies[k - 1].verdict == WINNABLE


def test_unsolvable_deal_is_lost_from_ply_0() -> None:
    """Seed 4 in draw 3 is proven unsolvable: ply 0 and every later ply are lost."""
    variant = Variant(3, 3)
    board = Board.from_seed("4", variant)
    assert solve(board, Budget(seconds=20), CERTIFICATE).result == UNSOLVABLE
    moves = []
    for _ in range(6):
        move = board.legal_moves()[0]
        board.play(move)
        moves.append(str(move))
    record = GameRecord(variant=variant, seed="4", moves=tuple(moves))
    result = analyse(record, SMALL)
    assert result.plies[0].verdict in (LOST, UNKNOWN)
    assert [p.verdict for p in result.plies] == [LOST] * 7
    assert result.lost_at is None


def test_budget_bounds_the_work() -> None:
    """A tiny total budget stops the searches (plies left unknown) within a fraction of
    a second; a larger one decides more plies of the same game."""
    record = play_game("budget", Variant(1, 1), random.Random(5), mistakes=0.0, max_moves=60)
    if record.result == "won":
        record = GameRecord(variant=record.variant, seed=record.seed, moves=record.moves[:30])
    result = analyse(record, AnalysisBudget(per_position=0.01, total=0.05))
    check_consistent(record, result)
    assert result.seconds < 0.5  # the searches' 0.05 s, plus replaying the record
    assert UNKNOWN in {p.verdict for p in result.plies}, "the budget left plies undecided"
    more = analyse(record, AnalysisBudget(per_position=1.0, total=10.0))
    check_consistent(record, more)
    assert more.decided() > result.decided()


def test_lost_at_definition() -> None:
    """The first lost ply whose previous ply is winnable, else None."""
    w, lo, u = WINNABLE, LOST, UNKNOWN
    assert lost_at([w, w, lo, lo]) == 2
    assert lost_at([w, u, lo]) is None
    assert lost_at([lo, lo]) is None
    assert lost_at([w, w]) is None
    assert lost_at([u, u]) is None


def test_play_prefix_is_the_engine_position() -> None:
    """The position after a prefix of moves equals the engine's own replay of it."""
    record = GameRecord.parse(WON[0].read_text())
    for ply in (0, 1, 10, len(record.moves)):
        board = Board(Deal.from_seed(str(record.seed)), record.variant)
        for token in record.moves[:ply]:
            board.play(token)
        assert play_prefix(record, ply).key() == board.key()
    with pytest.raises(ValueError, match="outside"):
        play_prefix(record, len(record.moves) + 1)


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="klondike-live")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["analyse", *argv])
    status: int = args.func(args)
    return status


def test_cli_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    """`--json` prints exactly {"plies": [{"ply", "verdict", "line"}], "lost_at"}."""
    path = WON[0]
    assert run_cli([str(path), "--budget", "0.5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"plies", "lost_at"}
    record = GameRecord.parse(path.read_text())
    assert len(data["plies"]) == len(record.moves) + 1
    for index, ply in enumerate(data["plies"]):
        assert set(ply) == {"ply", "verdict", "line"} and ply["ply"] == index
        assert ply["verdict"] in ("winnable", "lost", "unknown")
        assert isinstance(ply["line"], list) == (ply["verdict"] == "winnable")
    assert data["lost_at"] is None


def test_cli_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The text output has one line per ply and a summary."""
    record = GameRecord(variant=Variant(3, 3), seed="4", moves=("D",))
    path = tmp_path / "game.txt"
    path.write_text(str(record))
    assert run_cli([str(path), "--budget", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["0", "deal", "lost"]
    assert out[1].split()[:4] == ["1", "after", "D", "lost"]
    assert out[2].startswith("2 plies: 0 winnable, 2 lost, 0 unknown")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("klondike-game 1\n", "missing the 'variant:' line"),
        ("klondike-game 1\nvariant: draw=1 passes=1 f2t=no\nseed: 5\nmoves: 99\n", "move 1"),
        ("hello\n", "expected 'klondike-game 1'"),
    ],
)
def test_cli_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    """Unusable input: exit status 2, one message on stderr, no traceback."""
    path = tmp_path / "bad.txt"
    path.write_text(text)
    assert run_cli([str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert run_cli([str(tmp_path / "missing.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_the_stored_lost_game_was_lost_by_move_14() -> None:
    """tests/data/lost-draw3-lose4.txt (the browser test's game): ply 13 is winnable,
    ply 14 is proven lost, so move 14 lost it."""
    record = GameRecord.parse((DATA / "lost-draw3-lose4.txt").read_text())
    result = analyse(record, AnalysisBudget(per_position=2.0, total=30.0))
    check_consistent(record, result)
    assert result.lost_at == 14
