"""Game records: parse, format, replay, declared results and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from klondike_live.engine import (
    Deal,
    GameRecord,
    NotationError,
    RecordResultError,
    ReplayError,
    Variant,
)

from testdata import DATA

WON = sorted(DATA.glob("won-*.txt"))


@pytest.mark.parametrize("path", WON, ids=lambda p: p.name)
def test_won_records_replay_to_a_win(path: Path) -> None:
    """Each stored won game replays through the checked path to 52 foundation cards."""
    record = GameRecord.parse(path.read_text())
    assert record.result == "won"
    assert record.replay().is_won()


@pytest.mark.parametrize("path", WON, ids=lambda p: p.name)
def test_records_round_trip(path: Path) -> None:
    """GameRecord.parse(str(r)) == r, and the text is stable."""
    record = GameRecord.parse(path.read_text())
    assert GameRecord.parse(str(record)) == record
    assert str(GameRecord.parse(str(record))) == str(record)


def test_record_with_a_deal_block() -> None:
    """A record may carry the deal itself instead of a seed."""
    seeded = GameRecord.parse((DATA / "won-draw3-seed3.txt").read_text())
    with_deal = GameRecord(
        variant=seeded.variant, deal=Deal.from_seed("3"), moves=seeded.moves, result="won"
    )
    text = str(with_deal)
    assert "klondike-deal 1\n1: " in text and "seed:" not in text
    again = GameRecord.parse(text)
    assert again == with_deal
    assert again.replay().is_won()


def test_moves_may_continue_on_indented_lines() -> None:
    """`moves:` continues on lines that start with whitespace; comments are skipped."""
    text = "klondike-game 1\nvariant: draw=1\nseed: 1\nmoves: D D\n  D\n# note\n\tD\n"
    record = GameRecord.parse(text)
    assert record.moves == ("D", "D", "D", "D")
    assert len(record.replay().waste) == 4


def test_seed_may_hold_spaces() -> None:
    """The seed is the rest of its line: `hello world` is one seed."""
    record = GameRecord.parse("klondike-game 1\nvariant: draw=1\nseed: hello world\nmoves:\n")
    assert record.seed == "hello world"
    assert record.starting_deal() == Deal.from_seed("hello world")


def test_illegal_move_names_index_token_and_reason() -> None:
    """Replay stops at the first illegal move with its 1-based index and token."""
    record = GameRecord.parse("klondike-game 1\nvariant: draw=1\nseed: 1\nmoves: D D WF 12\n")
    with pytest.raises(ReplayError) as info:
        record.replay()
    assert (info.value.index, info.value.token) == (3, "WF")
    assert "foundation" in info.value.reason


def test_malformed_move_names_index_and_token() -> None:
    """A token that is not a move fails replay at its index like an illegal one."""
    record = GameRecord.parse("klondike-game 1\nvariant: draw=1\nseed: 1\nmoves: D X9 D\n")
    with pytest.raises(ReplayError) as info:
        record.replay()
    assert (info.value.index, info.value.token) == (2, "X9")
    assert "not a move token" in info.value.reason


def test_declared_won_must_be_a_win() -> None:
    """`result: won` on moves that do not win is refused."""
    record = GameRecord(variant=Variant(), seed="1", moves=("D",), result="won")
    with pytest.raises(RecordResultError, match="leave 52 cards"):
        record.replay()


def test_other_results_only_for_games_not_won() -> None:
    """resigned/timeout/unfinished are accepted for a game the moves do not win, not for a win."""
    won = GameRecord.parse((DATA / "won-draw3-seed3.txt").read_text())
    for result in ("resigned", "timeout", "unfinished"):
        GameRecord(variant=Variant(), seed="1", moves=("D",), result=result).replay()
        with pytest.raises(RecordResultError, match=f"says {result}"):
            GameRecord(variant=won.variant, seed=won.seed, moves=won.moves, result=result).replay()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty record"),
        ("klondike-game 2\n", "line 1: expected 'klondike-game 1'"),
        ("klondike-game 1\nvariant: draw=1\nseed: 1\nplayer: bob\n", "line 4: unknown record line"),
        ("klondike-game 1\nseed: 1\n", "missing the 'variant:' line"),
        ("klondike-game 1\nvariant: draw=1\n", "missing the 'seed:' line or deal block"),
        ("klondike-game 1\nvariant: draw=2\nseed: 1\n", "line 2: bad draw"),
        ("klondike-game 1\nvariant: draw=1\nseed: 1\nseed: 2\n", "line 4: a second 'seed:'"),
        ("klondike-game 1\nvariant: draw=1\nseed: 1\nresult: lost\n", "line 4: unknown result"),
        ("klondike-game 1\nvariant: draw=1\nseed: 1\n  D\n", "line 4: only the 'moves:' line"),
        ("klondike-game 1\nvariant: draw=1\nseed:\n", "line 3: empty seed"),
    ],
)
def test_malformed_records_name_the_line(text: str, message: str) -> None:
    """Malformed record text is a NotationError naming the line and the problem."""
    with pytest.raises(NotationError, match=message):
        GameRecord.parse(text)


def test_record_with_seed_and_deal_is_refused() -> None:
    """A record carries a seed or a deal block, not both."""
    deal = str(Deal.from_seed("1"))
    with pytest.raises(NotationError, match="not both"):
        GameRecord.parse(f"klondike-game 1\nvariant: draw=1\n{deal}seed: 1\nmoves:\n")


def test_bad_deal_block_names_its_line() -> None:
    """Errors inside a record's deal block carry the record's line numbers."""
    deal = str(Deal.from_seed("1")).replace("2: 7C AH", "2: 7C TC")
    with pytest.raises(NotationError, match="line 5: duplicate card TC"):
        GameRecord.parse(f"klondike-game 1\nvariant: draw=1\n{deal}moves:\n")
