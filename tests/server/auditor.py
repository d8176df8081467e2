"""The leak auditor: every frame a client received, checked against what it may know.

Ground truth is the finished race's game records (seed and every racer's moves). Board
frames say how many moves their board had (`moves`) and its status, and a room's frames
reach a client in the order Redis executed the writes, so the auditor can rebuild, for
each frame, exactly what each racer knew at that moment:

- a racer may receive board frames of its own seat only, for the `own` audience, with
  cards it has seen face up after that many moves;
- a spectator may see a card only if every racer still playing has seen it (each
  racer's knowledge taken at its last frame received before this one);
- nobody sees the seed, or a card beyond those rules, before the race's results;
- progress frames carry no card at all; error messages name only cards the viewer knows.

Any violation fails the test with the frame and the card.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from klondike_live.engine import CARDS, Board, Card, Deal, GameRecord, Move, Variant

ALL = (1 << 52) - 1
CARD_TOKEN = re.compile(r"\b(?:10|[A2-9TJQK])[CDHS]\b")
DONE = {"won", "resigned", "timeout"}


@dataclass(frozen=True)
class Truth:
    """The race as it really was: variant, seed and each seat's move tokens."""

    variant: Variant
    seed: str
    moves: Mapping[int, Sequence[str]]

    @classmethod
    def from_results(cls, results: Mapping[str, Any]) -> Truth:
        records = {row["seat"]: GameRecord.parse(row["record"]) for row in results["ranking"]}
        variant = next(iter(records.values())).variant
        return cls(variant, results["seed"], {seat: r.moves for seat, r in records.items()})

    def seen(self, seat: int, moves: int) -> int:
        """What racer `seat` had seen face up after its first `moves` moves."""
        return _seen_after(self.variant, self.seed, tuple(self.moves[seat]))[moves]


@cache
def _seen_after(variant: Variant, seed: str, moves: tuple[str, ...]) -> list[int]:
    board = Board(Deal.from_seed(seed), variant)
    out = [board.seen]
    for token in moves:
        board.push(Move.parse(token))
        out.append(board.seen)
    return out


def view_cards(view: Mapping[str, Any]) -> set[int]:
    cards = {c for _, pile in view["tableau"] for c in pile if c >= 0}
    cards |= {c for c in view["waste"] if c >= 0}
    cards |= foundation_cards(view["foundations"])
    return cards


def foundation_cards(ranks: Iterable[int]) -> set[int]:
    return {suit * 13 + r for suit, rank in enumerate(ranks) for r in range(rank)}


def diff_cards(diff: Mapping[str, Any]) -> set[int]:
    cards = {c for _, _, _, added in diff["piles"] for c in added if c >= 0}
    if "foundations" in diff:
        cards |= foundation_cards(diff["foundations"])
    return cards


def _names(mask: int, cards: set[int]) -> str:
    return " ".join(str(CARDS[c]) for c in sorted(cards) if not mask >> c & 1)


def audit(
    received: Sequence[Mapping[str, Any]],
    truth: Truth,
    *,
    role: str,
    seat: int | None = None,
) -> int:
    """Check every frame one client received; return how many board frames were checked."""
    seats = sorted(truth.moves)
    moves_at = dict.fromkeys(seats, 0)
    status_at = dict.fromkeys(seats, "playing")
    revealed = False
    checked = 0
    for index, message in enumerate(received):
        kind = message.get("t")
        where = f"frame {index} ({kind})"
        if kind == "results":
            revealed = True
            continue
        if kind == "room" and message.get("state") == "finished":
            assert "seed" in message, f"{where}: a finished room names its seed"
            revealed = True
            continue
        if not revealed and len(truth.seed) >= 16:
            # Short test seeds ("31") occur in any frame's numbers; real seeds are 32 hex.
            assert truth.seed not in repr(message), f"{where}: the seed leaked before the end"
        if kind == "progress":
            for row in message["boards"]:
                assert len(row) == 5 and all(isinstance(x, int) for x in row[:4]), where
                assert isinstance(row[4], str), where
            continue
        if kind in ("board", "diff"):
            s = message["seat"]
            moves_at[s] = message["moves"]
            status_at[s] = message["status"]
            cards = view_cards(message["view"]) if kind == "board" else diff_cards(message["d"])
            if message["audience"] == "final":
                assert revealed, f"{where}: a final board before the results"
                continue
            if role == "racer":
                assert message["audience"] == "own", (
                    f"{where}: a racer got a {message['audience']} frame"
                )
                assert s == seat, f"{where}: racer {seat} got board {s}"
                allowed = truth.seen(s, message["moves"])
            else:
                assert message["audience"] == "spectator", f"{where}: a spectator got an own frame"
                allowed = ALL
                for t in seats:
                    if status_at[t] not in DONE:
                        allowed &= truth.seen(t, moves_at[t])
            assert cards <= _mask_set(allowed), (
                f"{where}: board {s} shows {_names(allowed, cards)} to a {role} who may not know it"
            )
            checked += 1
            continue
        if kind == "error" and not revealed and role == "racer" and seat is not None:
            named = {Card.parse(t) for t in CARD_TOKEN.findall(str(message.get("msg", "")))}
            allowed = truth.seen(seat, moves_at.get(seat, 0))
            assert named <= _mask_set(allowed), f"{where}: error names {_names(allowed, named)}"
    return checked


def _mask_set(mask: int) -> set[int]:
    return {c for c in range(52) if mask >> c & 1}


async def audit_clients(redis: Any, clients: Sequence[Any]) -> int:
    """Audit every race frame the given clients received, against the races as stored.

    Called after each server test (see conftest.py): for every race room a client saw
    and every race (`gen`) of it that was dealt, the truth is read from Redis (the
    results of a finished race, or the seed and stored moves of one still going) and
    the client's frames of that race are audited. Solo games are left out: they have no
    competitive stake, and undo rewrites their history.
    """
    from klondike_live import keys
    from klondike_live.race.room import RoomState

    checked = 0
    for client in clients:
        rooms = {m["room"] for m in client.received if m.get("t") == "room"}
        for room_id in rooms:
            blob = await redis.hget(keys.room(room_id), "state")
            if blob is None:
                continue
            state = RoomState.from_blob(blob)
            if state.kind != "race":
                continue
            seat = state.seat_of(client.user)
            for gen in range(1, state.gen + 1):
                truth = await _truth(redis, state, gen)
                if truth is None:
                    continue
                frames = [
                    m
                    for m in client.received
                    if m.get("room") == room_id and m.get("epoch", m.get("gen", gen)) == gen
                ]
                role = "racer" if seat is not None else "spectator"
                checked += audit(frames, truth, role=role, seat=seat)
    return checked


async def _truth(redis: Any, state: Any, gen: int) -> Truth | None:
    import msgpack

    from klondike_live import keys

    data = await redis.hget(keys.results(state.id, gen), "data")
    if data is not None:
        return Truth.from_results(msgpack.unpackb(data, raw=False))
    if gen != state.gen or not state.seed:
        return None
    moves = {}
    for seat in range(state.capacity):
        tokens = await redis.lrange(keys.moves(state.id, gen, seat), 0, -1)
        if await redis.exists(keys.board(state.id, gen, seat)):
            moves[seat] = [t.decode() for t in tokens]
    return Truth(state.variant, state.seed, moves) if moves else None
