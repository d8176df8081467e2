"""The `solve` subcommand: single positions, files, batch mode and input errors."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from klondike_live.engine import Board, Deal, GameRecord, Variant
from klondike_live.engine.position import format_position
from klondike_live.solver.cli import add_parser


def run(argv: list[str]) -> int:
    """Parse `argv` with a parser holding only the `solve` subcommand and run it."""
    parser = argparse.ArgumentParser(prog="klondike-live")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["solve", *argv])
    status: int = args.func(args)
    return status


def wins(board: Board, moves: list[str]) -> bool:
    """The tokens replay through `Board.play` to a win."""
    for token in moves:
        board.play(token)
    return board.is_won()


def test_json_output_of_a_seed(capsys: pytest.CaptureFixture[str]) -> None:
    """`--json` prints one object with result, moves, nodes and seconds; the moves win."""
    assert run(["4", "--json", "--timeout", "20"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"result", "moves", "nodes", "seconds"}
    assert data["result"] == "solvable"
    assert wins(Board.from_seed("4", Variant(1, 1)), data["moves"])


def test_par_adds_optimal(capsys: pytest.CaptureFixture[str]) -> None:
    """With `--par` the object also says whether the line is proven shortest."""
    assert run(["11", "--draw", "3", "--par", "--timeout", "30", "--nodes", "30000", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["result"] == "solvable" and isinstance(data["optimal"], bool)


def test_deal_file_and_variant_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A deal text file is solved in the variant the options name."""
    path = tmp_path / "deal.txt"
    path.write_text(str(Deal.from_seed("1")))
    assert run([str(path), "--draw", "3", "--passes", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["result"] == "solvable"
    assert wins(Board.from_seed("1", Variant(3, 3)), data["moves"])


def test_record_is_solved_from_its_last_move(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A game record is solved from the position after its moves, in its own variant."""
    record = GameRecord(Variant(3, 3), seed="1", moves=("D", "D"))
    path = tmp_path / "game.txt"
    path.write_text(str(record))
    assert run([str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["result"] == "solvable"
    assert wins(record.replay(), data["moves"])


def test_position_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A position text file is solved too."""
    board = Board.from_seed("1", Variant(3, 3))
    board.play("D")
    path = tmp_path / "position.txt"
    path.write_text(format_position(board))
    assert run([str(path)]) == 0
    assert capsys.readouterr().out.startswith("solvable")


def test_batch_writes_jsonl_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--seeds A-B` solves each deal, writes one JSON line each and a verdict summary."""
    out = tmp_path / "out.jsonl"
    assert (
        run(["--seeds", "9-11", "--draw", "3", "--timeout", "5", "--jsonl", str(out), "--json"])
        == 0
    )
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["seed"] for line in lines] == ["9", "10", "11"]
    summary = json.loads(capsys.readouterr().out)
    assert summary["deals"] == 3
    assert summary["solvable"] + summary["unsolvable"] + summary["unknown"] == 3
    assert summary["error"] == 0
    for line in lines:
        if line["result"] == "solvable":
            assert wins(Board.from_seed(line["seed"], Variant(3, 3)), line["moves"])


def test_batch_text_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """Without `--json` the batch ends with a one-line summary of counts and times."""
    assert run(["--seeds", "6", "--timeout", "5"]) == 0
    out = capsys.readouterr().out
    assert "1 deals" in out and "median" in out and "p90" in out and "nodes/s" in out


def test_batch_reads_seeds_and_answers_each_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--batch FILE`: one JSON line per seed line, in order, each in its own variant."""
    path = tmp_path / "seeds.txt"
    path.write_text("4\n\n# a comment\n6 draw=3 passes=3\n11 draw=3\n")
    assert run(["--batch", str(path), "--timeout", "20"]) == 0
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    assert [(line["seed"], line["variant"]) for line in lines] == [
        ("4", "draw=1 passes=1 f2t=no"),
        ("6", "draw=3 passes=3 f2t=no"),
        ("11", "draw=3 passes=3 f2t=no"),
    ]
    assert lines[0]["result"] == "solvable"
    assert wins(Board.from_seed("4", Variant(1, 1)), lines[0]["moves"])
    for line in lines:
        assert set(line) >= {"result", "moves", "nodes", "seconds"}
        if line["result"] == "solvable":
            board = Board.from_seed(line["seed"], Variant.parse(line["variant"]))
            assert wins(board, line["moves"])
    assert "solvable" in captured.err


def test_batch_from_stdin_with_a_bad_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--batch -` reads stdin; a bad line gets an error answer, the rest go on, exit 2."""
    monkeypatch.setattr("sys.stdin", io.StringIO("6 draw=7\n6\n"))
    assert run(["--batch", "-", "--timeout", "5"]) == 2
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0]["result"] == "error" and "draw" in lines[0]["error"]
    assert lines[1]["seed"] == "6" and lines[1]["result"] in ("solvable", "unsolvable")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--seeds", "5-1"], "below"),
        (["--seeds", "a-b"], "bad seed range"),
        (["1", "--seeds", "1-2"], "not both"),
        ([], "give a SEED"),
        (["1", "--jsonl", "x"], "batch mode"),
        (["1", "--batch", "-"], "not both"),
        (["--batch", "-", "--jsonl", "x"], "stdout"),
        (["--batch", "/nonexistent/seeds.txt"], "cannot read"),
    ],
)
def test_bad_arguments_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Unusable arguments print a clear message on stderr and exit 2, with no traceback."""
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_bad_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file that is no deal, position or record exits 2 naming the file and the line."""
    path = tmp_path / "junk.txt"
    path.write_text("klondike-deal 1\n1: XX\n")
    assert run([str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "line" in err


def test_main_cli_has_the_solve_command(capsys: pytest.CaptureFixture[str]) -> None:
    """The project's `klondike-live` entry point offers `solve`."""
    from klondike_live.cli import main

    assert main(["solve", "6", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["result"] in ("solvable", "unsolvable")
