"""What every client of the service tier must have been sent, checked as frames arrive.

Two checks run on every frame when the nodes settle after it arrived (`Cluster.check`):

Leaks (`check_frame`), the leak auditor's rules (tests/server/auditor.py, whose card
extraction this reuses) with knowledge read from the store at the moment a frame
arrived: the seed and every board's moves (what a racer has seen is the engine replay
of its moves). A racer gets board frames of its own seat only, for its own audience,
showing only cards it had seen after that many moves; a spectator (or a connection not
in the room) only cards every racer still playing has seen, all of them once the race
is over; error messages name only cards their viewer knows; nobody sees the seed or
the results before the end. Knowledge only grows while a race runs, so a frame that
passes when it arrived was also allowed when it was sent, whatever order catch-up sent
it in.

`auditor.audit` instead reads each racer's knowledge off the frames the same connection
got before. That holds for live frames, not for catch-up: a spectator joining a race
under way gets one board after the other (a snapshot of board 0 may show a card racer 1
saw after moves of its own that this connection has not been sent yet), and a racer
resuming on a new connection knows what its previous one was shown.

Streams (`Streams`). Per connection and board stream (seat, audience, epoch): a diff
only after that board's snapshot or a resume's `since`, each diff's offset exactly one
past the last (no gap, no repeat), and a snapshot never behind what was already sent.

`RaceNow.lagging_behind` says which of a viewer's boards it has not caught up with:
once the nodes settled, a connection in a race that neither lags nor closed must be at
the store's offset of every board it watches.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from klondike_live.engine import CARDS, Card
from klondike_live.protocol import incoming as msg
from klondike_live.race.room import COUNTDOWN, FINISHED, RACING, RoomState
from klondike_live.race.status import BoardStatus
from klondike_live.store import Store

from auditor import (
    ALL,
    CARD_TOKEN,
    Truth,
    check_match,
    check_reactions,
    diff_cards,
    view_cards,
)

StreamKey = tuple[str, int, str, int]
"""A board stream as a client sees it: (room, seat, audience, epoch)."""


# ------------------------------------------------------------ streams


@dataclass
class Streams:
    """One connection's position in every board stream it was sent."""

    at: dict[StreamKey, int] = field(default_factory=dict)

    def resume(self, room: str, audience: str, since: Iterable[msg.Since]) -> None:
        """The client (re)joined saying it holds these streams up to these offsets."""
        for mark in since:
            self.at[(room, mark.seat, audience, mark.epoch)] = mark.offset

    def feed(self, message: Mapping[str, Any], where: str) -> None:
        """One received frame; a board frame must continue its stream."""
        kind = message.get("t")
        if kind not in ("board", "diff"):
            return
        key = (message["room"], message["seat"], message["audience"], message["epoch"])
        offset = message["off"]
        last = self.at.get(key)
        if kind == "board":
            assert last is None or offset >= last, (
                f"{where}: snapshot of {key} at offset {offset}, behind {last} already sent"
            )
        else:
            assert last is not None, f"{where}: diff {offset} of {key} before its board"
            assert offset > last, f"{where}: diff of {key} repeats offset {offset} (at {last})"
            assert offset == last + 1, f"{where}: diff of {key} jumps from {last} to {offset}"
        self.at[key] = offset


# ------------------------------------------------------------ the race as stored now


@dataclass(frozen=True)
class RaceNow:
    """A room's current race as the store has it at one moment."""

    state: RoomState
    moves: dict[int, list[str]]
    fields: dict[int, dict[str, str]]

    @property
    def dealt(self) -> bool:
        return self.state.state in (COUNTDOWN, RACING, FINISHED) and bool(self.state.seed)

    @property
    def finished(self) -> bool:
        return self.state.state == FINISHED

    @property
    def truth(self) -> Truth:
        return Truth(self.state.variant, self.state.seed, self.moves)

    def status(self, seat: int) -> BoardStatus:
        return BoardStatus(self.fields[seat]["status"])

    def offset(self, seat: int, audience: str) -> int:
        return int(self.fields[seat]["own_offset" if audience == "own" else "spec_offset"])

    def seen(self, seat: int) -> int:
        """What racer `seat` has seen: the engine replay of its stored moves."""
        return self.truth.seen(seat, len(self.moves[seat]))

    def spectators_may_know(self) -> int:
        """Every card every racer still playing has seen (all of them once it is over)."""
        if self.finished:
            return ALL
        known = ALL
        for seat in self.moves:
            if self.status(seat) is BoardStatus.PLAYING:
                known &= self.seen(seat)
        return known

    def lagging_behind(self, streams: Streams, *, seat: int | None) -> list[str]:
        """The boards of this race a viewer (a racer of `seat`, or a spectator) is not
        up to date with."""
        if not self.dealt:
            return []
        if seat is not None:
            wanted = [(seat, "own")]
        else:
            wanted = [(s, "spectator") for s in sorted(self.moves)]
        behind = []
        for s, audience in wanted:
            have = streams.at.get((self.state.id, s, audience, self.state.gen))
            if have != self.offset(s, audience):
                behind.append(f"{audience} {s}: at {have}, stored {self.offset(s, audience)}")
        return behind


async def race_now(store: Store, room_id: str) -> RaceNow | None:
    """The room's current race from the store (None when there is no such room)."""
    loaded = await store.load_room(room_id)
    if loaded is None:
        return None
    state = loaded[0]
    moves: dict[int, list[str]] = {}
    fields: dict[int, dict[str, str]] = {}
    if state.seed:
        seats = [seat for seat, _ in state.seated()]
        for seat, record in (await store.load_boards(room_id, state.gen, seats)).items():
            moves[seat] = record.moves
            fields[seat] = record.fields
    return RaceNow(state, moves, fields)


# ------------------------------------------------------------ one frame


def _names(cards: set[int]) -> str:
    return " ".join(str(CARDS[c]) for c in sorted(cards))


def check_frame(message: Mapping[str, Any], where: str, now: RaceNow, *, seat: int | None) -> None:
    """One frame a viewer got (the racer of `seat`, or with None a spectator or a
    connection not in the room), against what it may know at the moment it arrived
    (see the module docstring)."""
    state = now.state
    if message.get("t") in ("room", "results"):
        check_match(message, where)
    gen = message.get("epoch", message.get("gen", state.gen))
    if gen != state.gen or not now.dealt:
        return  # an earlier race (over, so revealed), or nothing dealt to leak yet
    kind = message.get("t")
    revealed = now.finished
    if kind == "results":
        assert revealed, f"{where}: results of a race still being played"
        return
    if kind == "room" and message.get("state") == FINISHED:
        assert message.get("seed") == state.seed, f"{where}: a finished room names its seed"
        return
    if not revealed:
        assert state.seed not in repr(message), f"{where}: the seed leaked before the end"
    if kind == "progress":
        for row in message["boards"]:
            assert len(row) == 5 and all(isinstance(x, int) for x in row[:4]), where
            assert isinstance(row[4], str), where
    elif kind == "reactions":
        check_reactions(message, where)
    elif kind in ("board", "diff"):
        audience = message["audience"]
        if audience == "final":
            assert revealed, f"{where}: a final board before the results"
            return
        cards = view_cards(message["view"]) if kind == "board" else diff_cards(message["d"])
        if seat is not None:
            assert audience == "own", f"{where}: a racer got a {audience} frame"
            assert message["seat"] == seat, f"{where}: racer {seat} got board {message['seat']}"
            allowed = now.truth.seen(seat, message["moves"])
            whom = f"racer {seat} at that move"
        else:
            assert audience == "spectator", f"{where}: a spectator got an {audience} frame"
            allowed = now.spectators_may_know()
            whom = "a spectator while a racer still playing has not seen it"
        shown = {c for c in cards if not allowed >> c & 1}
        assert not shown, f"{where}: board {message['seat']} shows {_names(shown)} to {whom}"
    elif kind == "error" and not revealed:
        named = {Card.parse(t) for t in CARD_TOKEN.findall(str(message.get("msg", "")))}
        allowed = now.seen(seat) if seat is not None else 0
        shown = {c for c in named if not allowed >> c & 1}
        assert not shown, f"{where}: an error names {_names(shown)}, unknown to its viewer"
