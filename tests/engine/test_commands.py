"""The command line: deal, check and show, run as a real process and in-process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from klondike_live.cli import main
from klondike_live.engine import Deal, GameRecord

from testdata import DATA
from waits import scaled

VECTOR_1 = str(Deal.from_seed("1"))


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `klondike-live` as a separate process, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "klondike_live.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )


def test_deal_prints_the_first_test_vector() -> None:
    """`klondike-live deal 1` prints the standard's first test vector exactly."""
    vectors = (DATA / "kd1-vectors.txt").read_text()
    expected = vectors.split('seed "1"\n')[1].split("\n\n")[0] + "\n"
    result = run("deal", "1")
    assert result.returncode == 0
    assert result.stdout == expected == VECTOR_1
    assert result.stderr == ""


def test_deal_is_the_same_for_every_variant(capsys: pytest.CaptureFixture[str]) -> None:
    """A deal does not depend on the draw count."""
    assert main(["deal", "1", "--draw", "3"]) == 0
    assert capsys.readouterr().out == VECTOR_1


def test_check_accepts_a_won_game() -> None:
    """`check` replays a won record and prints the final position and `result: won`."""
    result = run("check", str(DATA / "won-draw1-seed31.txt"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "klondike-position 1"
    assert "foundations: C13 D13 H13 S13" in lines
    assert lines[-1] == "result: won"


def test_check_reads_standard_input() -> None:
    """`check -` reads the record from standard input."""
    text = (DATA / "won-draw3-seed3.txt").read_text()
    result = run("check", "-", stdin=text)
    assert result.returncode == 0 and result.stdout.endswith("result: won\n")


def test_check_rejects_an_illegal_move_with_its_index(tmp_path: Path) -> None:
    """An illegal move exits 1 naming its 1-based index, its token and the reason."""
    record = GameRecord.parse((DATA / "won-draw3-seed3.txt").read_text())
    moves = list(record.moves)
    moves[9] = "WF"  # the tenth move
    bad = tmp_path / "bad.txt"
    bad.write_text(str(GameRecord(variant=record.variant, seed=record.seed, moves=tuple(moves))))
    result = run("check", str(bad))
    assert result.returncode == 1
    assert "move 10 'WF'" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_check_rejects_a_malformed_move_with_its_index(tmp_path: Path) -> None:
    """A token that is not a move exits 1 naming its index and the token."""
    bad = tmp_path / "bad.txt"
    bad.write_text("klondike-game 1\nvariant: draw=1\nseed: 1\nmoves: D D 9Z\n")
    result = run("check", str(bad))
    assert result.returncode == 1
    assert "move 3 '9Z'" in result.stdout and "not a move token" in result.stdout


def test_check_unfinished_game() -> None:
    """A record that does not win is reported with its declared or default result."""
    text = "klondike-game 1\nvariant: draw=3\nseed: 9\nmoves: D D\nresult: resigned\n"
    result = run("check", "-", stdin=text)
    assert result.returncode == 0 and result.stdout.endswith("result: resigned\n")
    result = run("check", "-", stdin=text.replace("result: resigned\n", ""))
    assert result.returncode == 0 and result.stdout.endswith("result: unfinished\n")


def test_check_false_won_result_exits_1() -> None:
    """A record that claims a win it does not have fails the check."""
    text = "klondike-game 1\nvariant: draw=1\nseed: 9\nmoves: D\nresult: won\n"
    result = run("check", "-", stdin=text)
    assert result.returncode == 1 and "says won" in result.stdout


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hello\n", "line 1: expected 'klondike-game 1'"),
        ("klondike-game 1\nvariant: draw=1\nseed: 1\nwho: me\n", "line 4: unknown record line"),
        (
            "klondike-game 1\nvariant: draw=1\nklondike-deal 1\n1: TC\n",
            "a deal has 8 lines after its header",
        ),
        ("\xff\xfe", "cannot read"),
    ],
)
def test_malformed_input_exits_2_naming_the_line(tmp_path: Path, text: str, message: str) -> None:
    """Malformed record text exits 2 with a message naming the line, never a traceback."""
    path = tmp_path / "bad.txt"
    path.write_bytes(text.encode("latin-1"))
    result = run("check", str(path))
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_file_exits_2() -> None:
    """A file that does not exist is a clear error, exit 2."""
    result = run("check", "/nonexistent/record.txt")
    assert result.returncode == 2 and "cannot read /nonexistent/record.txt" in result.stderr


def test_show_a_seed(capsys: pytest.CaptureFixture[str]) -> None:
    """`show SEED` draws the deal with Unicode suits and face-down backs, no colour when piped."""
    assert main(["show", "1", "--draw", "3"]) == 0
    out = capsys.readouterr().out
    assert "draw=3 passes=3 f2t=no" in out
    assert "10♣" in out and "A♥" in out and "░░░" in out
    assert "\x1b[" not in out


def test_show_files_of_each_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`show FILE` accepts a deal, a position or a game record."""
    record = DATA / "won-draw1-seed28.txt"
    assert main(["show", str(record)]) == 0
    assert "score" in capsys.readouterr().out
    deal = tmp_path / "deal.txt"
    deal.write_text(VECTOR_1)
    assert main(["show", str(deal)]) == 0
    assert "10♣" in capsys.readouterr().out
    position = tmp_path / "position.txt"
    position.write_text(run("check", str(record)).stdout.rsplit("result:", 1)[0])
    assert main(["show", str(position)]) == 0
    out = capsys.readouterr().out
    assert "K♠" in out


def test_show_colours_red_suits_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a colour terminal red suits are coloured; NO_COLOR turns colour off."""
    import io

    from klondike_live.engine import Board
    from klondike_live.terminal import render, use_colour

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert use_colour(Tty())
    assert "\x1b[31;1m" in render(Board.from_seed("1"), colour=True)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_colour(Tty())
