"""Tournament rules as plain values: points, standings, transitions, stored form, view."""

from __future__ import annotations

import itertools
from datetime import date

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from klondike_live.daily.variants import DRAW1
from klondike_live.errors import Refusal
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import TournamentFormat
from klondike_live.race.tournament import (
    Entrant,
    HeatPhase,
    LogEntry,
    NewTournament,
    Result,
    TournamentPhase,
    TournamentState,
    new_tournament,
    score_round,
    standings,
)
from klondike_live.race.tournament_view import tournament_wire

NOW = 1_000_000
TODAY = date(2029, 12, 31)  # the open daily challenge's date


def heats(n: int = 2, cap: int = 10) -> TournamentState:
    deals = tuple((f"seed{i}", f"{i:064x}", True) for i in range(n))
    wanted = NewTournament(
        name="Heats",
        format=TournamentFormat.HEATS,
        variants=(DRAW1,),
        public=True,
        cap=cap,
        opens_ms=NOW,
        closes_ms=NOW + 10_000,
        start_ms=NOW + 20_000,
        heats=n,
        pause_s=60,
        time_limit_s=600,
    )
    return new_tournament("t-12345678", wanted, deals, "org", "Org", NOW, TODAY)


def series(first: date, last: date) -> TournamentState:
    """A series over `first` .. `last` (checked by `new_tournament`)."""
    wanted = NewTournament(
        name="Week",
        format=TournamentFormat.SERIES,
        variants=(DRAW1,),
        public=False,
        cap=5,
        opens_ms=NOW,
        closes_ms=NOW + 1,
        first_day=first,
        last_day=last,
    )
    return new_tournament("s-12345678", wanted, (), "org", "Org", NOW, TODAY)


def test_an_erased_player_is_the_marker_everywhere_in_a_tournament() -> None:
    """The organizer and removed entrants erased: their ids and names give way to the
    marker and the empty name, as entrants, in the log (the organizer's entries, the
    entry that removed each) and in results; everyone else's stay; a player not in it
    changes nothing."""
    cup = heats().enter("ann", "Ann", NOW).enter("bob", "Bob", NOW).enter("cat", "Cat", NOW)
    cup = cup.remove("org", "cat", NOW + 1).remove("org", "bob", NOW + 2)
    gone = cup.erased("org", "deleted.org", "").erased("cat", "deleted.cat", "")
    assert (gone.organizer, gone.organizer_name) == ("deleted.org", "")
    assert gone.removed == ("deleted.cat", "bob")
    assert [e.by for e in gone.log] == [""] * len(cup.log)
    assert [dict(e.args).get("name") for e in gone.log][-2:] == ["", "Bob"]
    assert "Cat" in repr(cup.log) and "Cat" not in repr(gone.log) and "Org" not in repr(gone)
    dropped = cup.erased("ann", "deleted.ann", "")
    assert [(e.user, e.name) for e in dropped.entrants] == [("deleted.ann", "")]
    assert dropped.log == cup.log
    assert cup.erased("zed", "deleted.zed", "") is cup


def test_a_round_gives_n_minus_place_plus_one_and_ties_share() -> None:
    """Five results: 5, 4, 3, 2, 1 points; two tied winners share 5 and 4."""
    plain = [
        Result(u, False, 0, found) for u, found in zip("abcde", (40, 30, 20, 10, 5), strict=True)
    ]
    assert [(s.result.user, s.place, s.points) for s in score_round(plain)] == [
        ("a", 1, 5), ("b", 2, 4), ("c", 3, 3), ("d", 4, 2), ("e", 5, 1),
    ]  # fmt: skip
    tied = [Result("x", True, 100, 52), Result("y", True, 100, 52), Result("z", False, 0, 9)]
    assert [(s.place, s.points) for s in score_round(tied)] == [(1, 2.5), (1, 2.5), (3, 1)]


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 5), st.integers(0, 52)), max_size=30))
def test_a_round_hands_out_exactly_the_table_s_points(rows: list[tuple[bool, int, int]]) -> None:
    """Whatever the ties, the points of a round of n add up to 1 + 2 + ... + n, better
    results never score less, and equal results score the same."""
    results = [Result(f"u{i}", won, t, 52 if won else f) for i, (won, t, f) in enumerate(rows)]
    scored = score_round(results)
    n = len(results)
    assert sum(s.points for s in scored) == n * (n + 1) / 2
    for a, b in itertools.pairwise(scored):
        assert a.points >= b.points
        if a.result.sort_key() == b.result.sort_key():
            assert a.points == b.points and a.place == b.place


def test_standings_break_ties_by_wins_then_rounds_then_share_a_rank() -> None:
    """Equal points: more rounds won first, then more rounds played; equal in all three
    share a rank; an entrant who played nothing is last with 0."""
    people = [Entrant(u, u.title(), 0) for u in ("ann", "bob", "cy", "dee", "eve", "fay")]
    r1 = score_round([Result("ann", True, 10, 52), Result("bob", False, 0, 30)])  # 2, 1
    r2 = score_round([Result("bob", True, 10, 52), Result("ann", False, 0, 30)])  # 2, 1
    r3 = score_round(
        [Result("cy", True, 10, 52), Result("dee", False, 0, 3), Result("ann", False, 0, 2)]
    )  # 3, 2, 1
    table = standings(people, [r1, r2, r3])
    assert [(s.rank, s.user, s.points, s.wins, s.rounds) for s in table] == [
        (1, "ann", 4, 1, 3), (2, "bob", 3, 1, 2), (3, "cy", 3, 1, 1), (4, "dee", 2, 0, 1),
        (5, "eve", 0, 0, 0), (5, "fay", 0, 0, 0),
    ]  # fmt: skip


def test_a_round_nobody_finished_has_no_winner() -> None:
    """First place with 5 cards home after resigning is a place, with its points, but
    not a win: a win is a finished board (all 52 home); a shared first place that was
    finished counts for each."""
    people = [Entrant(u, u.title(), 0) for u in ("ann", "bob", "cy")]
    nobody = score_round([Result("ann", False, 900, 5), Result("bob", False, 400, 2)])
    finished = score_round([Result("bob", True, 60, 52), Result("cy", True, 60, 52)])
    table = standings(people, [nobody, finished])
    assert [(s.user, s.points, s.wins, s.rounds) for s in table] == [
        ("bob", 2.5, 1, 2), ("ann", 2, 0, 1), ("cy", 1.5, 1, 1),
    ]  # fmt: skip


def test_registration_cap_removal_and_organizer_rules() -> None:
    t = heats(cap=2)
    t = t.enter("ann", "Ann", NOW + 1).enter("bob", "Bob", NOW + 2)
    with pytest.raises(Refusal) as full:
        t.enter("cy", "Cy", NOW + 3)
    assert full.value.code is ErrorCode.ROOM_FULL
    with pytest.raises(Refusal) as boss:
        t.remove("ann", "bob", NOW + 4)
    assert boss.value.code is ErrorCode.NOT_HOST
    t = t.remove("org", "bob", NOW + 4)
    with pytest.raises(Refusal) as gone:
        t.enter("bob", "Bob", NOW + 5)
    assert gone.value.code is ErrorCode.NOT_ALLOWED
    with pytest.raises(Refusal) as late:
        t.enter("cy", "Cy", NOW + 10_000)
    assert late.value.code is ErrorCode.WRONG_STATE
    with pytest.raises(Refusal):
        t.set_registration("org", True, NOW + 10_000)  # the window has passed
    done = t.cancel("org", NOW + 6)
    assert done.phase is TournamentPhase.CANCELLED and done.over
    assert all(h.phase is HeatPhase.CANCELLED for h in done.heats)


def test_a_rename_shows_an_entrant_and_the_organizer_under_their_new_names() -> None:
    """`rename` changes the entrant's name (and the organizer's, when it is theirs);
    anyone else's rename leaves the tournament as it is."""
    t = heats().enter("ann", "Ann", NOW + 1).enter("bob", "Bob", NOW + 2)
    renamed = t.rename("ann", "Anna")
    assert [(e.user, e.name) for e in renamed.entrants] == [("ann", "Anna"), ("bob", "Bob")]
    wire = tournament_wire(renamed, [], now_ms=NOW + 3)
    assert [e["name"] for e in wire["entrants"]] == ["Anna", "Bob"]
    assert t.rename("org", "Olga").organizer_name == "Olga"
    assert t.rename("cy", "Cy") == t


def test_the_stored_form_round_trips() -> None:
    t = heats().enter("ann", "Ann", NOW + 1).heat_opened(1, "room-0001", 1)
    t = t.heat_started(1, NOW + 20_000, NOW + 20_000)
    t = t.heat_finished(
        1, [Result("ann", True, 5, 52, 90, game="room-0001/1")], NOW + 30_000, NOW + 90_000
    )
    assert TournamentState.from_blob(t.to_blob()) == t
    week = series(date(2030, 1, 1), date(2030, 1, 7))
    assert TournamentState.from_blob(week.to_blob()) == week
    assert len(week.days()) == 7


def test_log_entries_carry_a_kind_and_its_args_beside_their_english_text() -> None:
    """Clients word an entry in their reader's language from `kind` and `args`; `text`
    is the English for a client that does not know the kind. An entry stored before
    kinds keeps its text and has no kind."""
    t = heats().enter("ann", "Ann", NOW + 1).remove("org", "ann", NOW + 2)
    t = t.heat_opened(1, "room-0001", 1).heat_started(1, NOW + 20_000, NOW + 20_000)
    wire = tournament_wire(t, [], now_ms=NOW + 21_000)["log"]
    assert [(e["by"], e["kind"], e["args"], e["text"]) for e in wire] == [
        ("Org", "created", {}, "created the tournament"),
        ("Org", "removed", {"name": "Ann"}, "removed Ann"),
        ("", "heat_started", {"heat": 1}, "Heat 1 started"),
    ]
    assert TournamentState.from_blob(t.to_blob()) == t
    data = msgpack.unpackb(t.to_blob(), raw=False)
    data["log"] = [entry[:3] for entry in data["log"]]
    old = TournamentState.from_blob(msgpack.packb(data, use_bin_type=True))
    assert old.log[1] == LogEntry(NOW + 2, "Org", "removed Ann")
    assert tournament_wire(old, [], now_ms=NOW + 21_000)["log"][1]["kind"] == ""


def test_a_heat_s_seed_is_shown_only_once_it_is_finished() -> None:
    """Every heat's commitment from the start; its seed only after its race is scored."""
    t = heats().enter("ann", "Ann", NOW + 1).heat_opened(1, "room-0001", 1)
    t = t.heat_started(1, NOW + 20_000, NOW + 20_000)
    before = tournament_wire(t, [], now_ms=NOW + 21_000)
    assert "seed0" not in repr(before) and "seed1" not in repr(before)
    assert [r["commitment"] for r in before["rounds"]] == [f"{0:064x}", f"{1:064x}"]
    t = t.heat_finished(1, [Result("ann", True, 5, 52, 90)], NOW + 30_000, NOW + 90_000)
    after = tournament_wire(t, [], now_ms=NOW + 31_000)
    assert after["rounds"][0]["seed"] == "seed0" and "seed1" not in repr(after)
    assert after["rounds"][1]["start_at"] == NOW + 90_000


def test_settings_that_make_no_tournament_are_refused() -> None:
    refused = {
        "a series' last day is on or after its first": (date(2030, 1, 7), date(2030, 1, 1)),
        "a series lasts at most 31 days": (date(2030, 1, 1), date(2030, 3, 1)),
        "a series starts today or later": (date(2029, 12, 30), date(2030, 1, 1)),
    }
    for message, (first, last) in refused.items():
        with pytest.raises(Refusal) as refusal:
            series(first, last)
        assert refusal.value.code is ErrorCode.BAD_FIELD
        assert refusal.value.message == message
    assert series(TODAY, TODAY).first_day == TODAY.isoformat()  # today is not too early


def test_registration_of_heats_closes_when_the_first_heat_s_room_opens() -> None:
    """A heat's seats are the entrants of when its room opened: started early, inside
    the registration window, it still takes no more entrants."""
    t = heats().enter("ann", "Ann", NOW + 1)
    assert t.registration_open(NOW + 2)
    opened = t.heat_opened(1, "room-0001", 1)
    assert not opened.registration_open(NOW + 2)
    with pytest.raises(Refusal) as late:
        opened.enter("bob", "Bob", NOW + 2)
    assert late.value.code is ErrorCode.WRONG_STATE


def test_whole_points_go_on_the_wire_as_integers() -> None:
    """The protocol's integers are never floats: 2 points is 2, a shared place 2.5."""
    t = heats().enter("ann", "Ann", NOW + 1).enter("bob", "Bob", NOW + 1)
    t = t.heat_opened(1, "room-0001", 1).heat_started(1, NOW + 20_000, NOW + 20_000)
    t = t.heat_finished(
        1, [Result("ann", True, 5, 52, 90), Result("bob", False, 0, 9)], NOW + 30_000, NOW
    )
    shown = tournament_wire(t, [], now_ms=NOW + 31_000)
    points = [row["points"] for row in shown["rounds"][0]["results"]]
    assert points == [2, 1] and all(type(p) is int for p in points)
    assert all(type(row["points"]) is int for row in shown["standings"])
