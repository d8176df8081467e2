"""The leak auditor: every frame a client received, and every HTTP answer a test fetched,
checked against what its receiver may know.

Ground truth is the finished race's game records (seed and every racer's moves). Board
frames say how many moves their board had (`moves`) and its status, as do the rows of
`progress` frames, and a room's frames reach a client in the order Redis executed the
writes (a catch-up tells the progress ahead of the boards it sends one after the
other), so the auditor can rebuild, for each frame, what each racer knew at that moment
as far as the receiver was told:

- a racer may receive board frames of its own seat only, for the `own` audience, with
  cards it has seen face up after that many moves;
- a spectator may see a card only if every racer still playing has seen it (each
  racer's knowledge taken at its last board frame or progress row received before
  this one);
- a racer whose own board is done (its own frames said `won`, `resigned` or `timeout`)
  may watch the rest of its race: spectator frames, under the spectator rule, and none
  before its own board was done;
- nobody sees the seed, or a card beyond those rules, before the race's results;
- progress frames carry no card at all; error messages name only cards the viewer knows;
- `reactions` frames carry their room and counts of the fixed reaction ids, nothing
  else: no text, no card, no seed (`check_reactions`).
- a match's score (`match` of a room or results frame, `check_match`) holds only its
  documented numbers: no card, no seed, nothing of a deal to come.
- account frames (`passkey_options`, `signed_in`, `signed_out`, `account_deleted`)
  carry their own fields and nothing else, and a `signed_in`'s token is for the account
  and session it names.

Quick race frames (`audit_queue`): `queued`, `matched` and `unqueued` carry exactly their
documented fields and no seed; a `matched` frame names a race room its receiver is
seated in, and arrives before any frame of that room.

Friends' frames (`audit_friends`): `relation`, `friends`, `challenge_sent`,
`challenged` and `challenge_ended` carry exactly their documented fields (a friends
list's entries too) and nothing of a board or a seed; a `challenge_ended` that names a
room names a private race its receiver is seated in, and arrives before any frame of it.

Daily challenges (`audit_daily`): every daily room of one date and variant deals the
same cards, so the auditor takes all of a client's frames of that day's rooms together,
with the time each arrived (the test clients stamp them) and two facts from the test:
when the account's ranked attempt ended (its leaderboard entry's `finished_at`) and
when the day closed (the test clocks' history, `CLOCKS`). Until the day closed:

- no frame carries the day's seed (in any room, any field), a `deal`, or a game record;
  a room or results frame claims `closed: true` only once a test clock passed midnight;
- before its own ranked attempt ended, an account sees no card of the deal except those
  its own ranked board has shown it (its seven up-cards, then what it turned over): no
  frame of anyone else's room, no result;
- its own board frames show only what it has seen; a spectator of a ranked attempt sees
  only what that player has seen while it plays;
- a daily `results` frame shows each final board only as far as its player saw it.

HTTP answers (`audit_http`, `audit_answer`): the tests' fetch helpers record every answer
with who asked and when (`record_http`); the `http_audit` fixture, imported by every test
module that fetches, checks them after the test against the games as stored, under the
policy of `race.redaction` (docs/rules.md, "What each viewer may see"):

- no answer carries the seed of a daily challenge whose day was open (`/api/daily...`
  included);
- `/api/results/ROOM/GEN` and `/api/replay/ROOM/GEN` answer only for a finished game; a
  race's or solo game's show everything; a daily game's, while its day is open, only to
  an account whose own ranked attempt of that day had ended, with no seed, deal text or
  game record, and every card (`view`, replay `start`, each step's `d`) one its board's
  player had seen at that point (`Asker.as_played`); after the close, everything.

Any violation fails the test with the frame or answer and the card.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import urlsplit

import jwt
import pytest

from klondike_live.engine import CARDS, Board, Card, Deal, GameRecord, Move, Variant
from klondike_live.engine.deal import DEAL_HEADER
from klondike_live.engine.record import RECORD_HEADER
from klondike_live.protocol.kinds import Reaction

if TYPE_CHECKING:
    from klondike_live.client import Message
    from klondike_live.race.room import RoomState
    from klondike_live.store.connect import RedisClient

    from daily_support import DayClock

ALL = (1 << 52) - 1
CARD_TOKEN = re.compile(r"\b(?:10|[A2-9TJQK])[CDHS]\b")
DONE = {"won", "resigned", "timeout"}

CLOCKS: list[DayClock] = []
"""Test clocks made during the current test (`daily_support.DayClock`): each has
`value_at(t)`, the time it told at wall-clock time `t`. Cleared before every test."""


@dataclass(frozen=True)
class Truth:
    """The race as it really was: variant, seed and each seat's move tokens."""

    variant: Variant
    seed: str
    moves: Mapping[int, Sequence[str]]
    start: int = 0  # record moves made before the game started (a game from a position)

    @classmethod
    def from_results(cls, results: Mapping[str, Any]) -> Truth:
        records = {row["seat"]: GameRecord.parse(row["record"]) for row in results["ranking"]}
        variant = next(iter(records.values())).variant
        moves = {seat: r.moves for seat, r in records.items()}
        return cls(variant, results["seed"], moves, int(results.get("from", 0)))

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


REACTIONS = frozenset(str(reaction) for reaction in Reaction)


def check_reactions(message: Mapping[str, Any], where: str) -> None:
    """A `reactions` frame: its room and how many of each known reaction, nothing more
    (no free text anyone typed, no card, no seed)."""
    assert set(message) == {"t", "room", "counts"}, f"{where}: reactions with {sorted(message)}"
    counts = message["counts"]
    assert isinstance(counts, dict) and counts, f"{where}: reactions without counts"
    assert set(counts) <= REACTIONS, f"{where}: unknown reactions {sorted(set(counts) - REACTIONS)}"
    for count in counts.values():
        assert type(count) is int and count > 0, f"{where}: a reaction count of {count!r}"


def _names(mask: int, cards: Iterable[int]) -> str:
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
    own_done = False  # a racer's own frames said its board is done
    revealed = False
    checked = 0
    for index, message in enumerate(received):
        kind = message.get("t")
        where = f"frame {index} ({kind})"
        if kind in ("room", "results"):
            check_match(message, where)
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
                # What the viewer is told of a racer's progress is what it may reason
                # from: a racer that made that many moves has seen what they showed it.
                s, moves, status = row[0], row[3], row[4]
                if s in moves_at and moves >= moves_at[s]:
                    moves_at[s] = moves
                    if status_at[s] not in DONE:
                        status_at[s] = status
            continue
        if kind == "reactions":
            check_reactions(message, where)
            continue
        if kind in ("board", "diff"):
            s = message["seat"]
            moves_at[s] = message["moves"]
            status_at[s] = message["status"]
            cards = view_cards(message["view"]) if kind == "board" else diff_cards(message["d"])
            if message["audience"] == "final":
                assert revealed, f"{where}: a final board before the results"
                continue
            if role == "racer" and message["audience"] == "own":
                assert s == seat, f"{where}: racer {seat} got board {s}"
                allowed = truth.seen(s, message["moves"])
                own_done = own_done or message["status"] in DONE
            else:
                if role == "racer":
                    assert own_done, f"{where}: a racer got a {message['audience']} frame"
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


MATCH_FIELDS = {"best_of", "from", "deals", "score", "over", "winner", "forfeit", "next_at"}
"""What a match's summary may hold (docs/protocol.md, "Matches")."""


def check_match(message: Mapping[str, Any], where: str) -> None:
    """A room or results frame's `match`: only its documented fields, each a number,
    a flag, None or a list of those: nothing a card or a seed could hide in."""
    match = message.get("match")
    if match is None:
        return
    assert isinstance(match, dict) and set(match) <= MATCH_FIELDS, f"{where}: match {match!r}"
    for key, value in match.items():
        items = value if isinstance(value, list) else [value]
        ok = all(v is None or isinstance(v, (int, bool)) for v in items)
        assert ok, f"{where}: match field {key} is {value!r}"


def _mask_set(mask: int) -> set[int]:
    return {c for c in range(52) if mask >> c & 1}


# ------------------------------------------------------------ daily challenges


@dataclass(frozen=True)
class DailyRoom:
    """One daily room as it really was: its player, whether ranked, its moves."""

    player: str
    ranked: bool
    truth: Truth | None  # None before any move was stored


@dataclass
class DailyTruth:
    """One day and variant: its seed, its rooms, and when each account's ranked attempt
    ended (ms, from its leaderboard entry)."""

    day: date
    seed: str
    rooms: dict[str, DailyRoom]
    finished_at: dict[str, int] = field(default_factory=dict)


def day_closed_at(day: date) -> Callable[[float], bool]:
    """Whether, at wall-clock time `t`, a test clock told a time after the day's end."""
    end = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)
    return lambda t: any(clock.value_at(t) >= end for clock in CLOCKS)


def _results_cards(message: Mapping[str, Any]) -> set[int]:
    cards: set[int] = set()
    for row in message.get("ranking", []):
        if "view" in row:
            cards |= view_cards(row["view"])
    return cards


def audit_daily(
    received: Sequence[Mapping[str, Any]],
    times: Sequence[float],
    user: str,
    truth: DailyTruth,
    closed: Callable[[float], bool],
) -> int:
    """Check one client's frames (`times`: when each arrived, wall clock) against one
    day's challenge; return how many frames with cards were checked."""
    finish = truth.finished_at.get(user)
    own = next(
        (rid for rid, room in truth.rooms.items() if room.player == user and room.ranked), None
    )
    own_truth = truth.rooms[own].truth if own is not None else None
    own_moves = 0
    spec_moves: dict[str, int] = {}
    checked = 0
    for index, message in enumerate(received):
        kind = message.get("t")
        where = f"frame {index} ({kind})"
        at = times[index] if index < len(times) else float("-inf")
        is_closed = closed(at)
        if not is_closed:
            assert truth.seed not in repr(message), f"{where}: the daily seed leaked"
        if kind == "reactions":
            check_reactions(message, where)
        room_id = message.get("room")
        if not isinstance(room_id, str) or room_id not in truth.rooms:
            continue
        room = truth.rooms[room_id]
        daily = message.get("daily") if kind in ("room", "results") else None
        if isinstance(daily, dict) and daily.get("closed"):
            assert is_closed, f"{where}: claims the {truth.day} challenge closed; it had not"
        if not is_closed:
            if kind in ("room", "results"):
                assert "seed" not in message and "deal" not in message, (
                    f"{where}: seed or deal of an open day"
                )
            if kind == "results":
                for row in message["ranking"]:
                    assert "record" not in row, f"{where}: a game record of an open day"
        done = finish is not None and finish <= at * 1000
        known = ALL if (done or is_closed) else 0
        if own_truth is not None and not (done or is_closed):
            known = own_truth.seen(0, min(own_moves, len(own_truth.moves[0])))
        if kind in ("board", "diff"):
            cards = view_cards(message["view"]) if kind == "board" else diff_cards(message["d"])
            if room_id == own and message["audience"] == "own":
                own_moves = message["moves"]
                assert own_truth is not None, where
                allowed = own_truth.seen(0, own_moves)
            elif message["audience"] == "spectator" and room.ranked and room.truth is not None:
                spec_moves[room_id] = message["moves"]
                allowed = known
                if message["status"] == "playing":
                    allowed &= room.truth.seen(0, message["moves"])
            else:
                allowed = known
            assert message["audience"] != "final", f"{where}: a final board"
            assert cards <= _mask_set(allowed), (
                f"{where}: daily board {room_id} shows {_names(allowed, cards)} to {user}, "
                "who may not know it"
            )
            checked += 1
        elif kind == "results":
            cards = _results_cards(message)
            assert cards <= _mask_set(known), (
                f"{where}: daily results show {_names(known, cards)} to {user} before its "
                "own attempt ended"
            )
            if not is_closed and room.truth is not None:
                for row in message["ranking"]:
                    seat = row["seat"]
                    final = room.truth.seen(seat, len(room.truth.moves[seat]))
                    shown = view_cards(row["view"])
                    assert shown <= _mask_set(final), (
                        f"{where}: the final board of an open day shows "
                        f"{_names(final, shown)}, which its player never saw"
                    )
            checked += 1
        elif kind == "error" and room_id == own and own_truth is not None:
            named = {Card.parse(t) for t in CARD_TOKEN.findall(str(message.get("msg", "")))}
            allowed = own_truth.seen(0, min(own_moves, len(own_truth.moves[0])))
            assert named <= _mask_set(allowed), f"{where}: error names {_names(allowed, named)}"
    return checked


def _bytes(reply: bytes | str | None) -> bytes | None:
    """A reply of a test client, bytes in and out (redis-py types replies `bytes | str`
    for clients that decode them)."""
    assert not isinstance(reply, str), reply
    return reply


def _text(reply: bytes | str) -> str:
    """A text reply of a test client (bytes in and out), decoded."""
    assert isinstance(reply, bytes), reply
    return reply.decode()


class Receiver(Protocol):
    """Who received frames: a test client, or an in-server bot's recorder."""

    @property
    def user(self) -> str: ...

    @property
    def received(self) -> list[Message]: ...


ACCOUNT_FRAMES: Final = {
    "passkey_options": {"t", "rid", "options", "create"},
    "signed_in": {"t", "rid", "user", "username", "token", "session"},
    "signed_out": {"t", "rid", "ended"},
    "bot_token": {"t", "rid", "user", "username", "token"},
    "bots": {"t", "rid", "bots"},
    "account_deleted": {"t", "rid", "games"},
}
"""The account frames (docs/protocol.md section 2b) and every field each may carry: none
names a room, a board or a card."""

BOT_LISTED: Final = {"user", "username", "created_at", "token_at"}
"""The fields of one bot account in a `bots` frame: never its token."""


def audit_account_frames(received: Sequence[Mapping[str, Any]]) -> int:
    """Check a client's account frames carry their own fields only, that a
    `signed_in` names the account its token is for, and that a bot's token is in no
    frame but the `bot_token` answer that issued it; how many were checked."""
    checked = 0
    bot_tokens = {m["token"] for m in received if m.get("t") == "bot_token"}
    for index, message in enumerate(received):
        kind = message.get("t")
        if bot_tokens and kind != "bot_token":
            shown = repr(message)
            assert not any(token in shown for token in bot_tokens), (
                f"frame {index} ({kind}): a bot's token outside the answer that issued it"
            )
        if kind not in ACCOUNT_FRAMES:
            continue
        where = f"frame {index} ({kind})"
        assert set(message) == ACCOUNT_FRAMES[kind], f"{where}: fields {sorted(message)}"
        if kind == "signed_in":
            claims = jwt.decode(message["token"], options={"verify_signature": False})
            assert claims["sub"] == message["user"], f"{where}: a token for another user"
            assert claims["sid"] == message["session"], f"{where}: a token for another session"
        elif kind == "bot_token":
            _audit_bot_token(received, index, message)
        elif kind == "bots":
            for bot in message["bots"]:
                assert set(bot) == BOT_LISTED, f"{where}: a bot with fields {sorted(bot)}"
        checked += 1
    return checked


def _audit_bot_token(
    received: Sequence[Mapping[str, Any]], index: int, message: Mapping[str, Any]
) -> None:
    """A bot's token goes only to its owner, answering the owner's own request: the
    connection is an account's (its welcome names a username), not the bot itself, and
    the token is the bot's (claims `sub`, `bot`, and a token id `sid`)."""
    where = f"frame {index} (bot_token)"
    claims = jwt.decode(message["token"], options={"verify_signature": False})
    assert claims["sub"] == message["user"], f"{where}: a token for another user"
    assert claims.get("bot") is True and claims.get("sid"), f"{where}: not a bot account's token"
    welcomes = [m for m in received[:index] if m.get("t") == "welcome"]
    assert welcomes, f"{where}: sent before the connection said who it is"
    asker = welcomes[-1]
    assert asker.get("username"), f"{where}: sent to a connection that is no account"
    assert asker["user"] != message["user"], f"{where}: sent to the bot itself"
    assert isinstance(message["rid"], int), f"{where}: not an answer to a request"


async def audit_clients(redis: RedisClient, clients: Sequence[Receiver]) -> int:
    """Audit every race and daily frame the given clients received, against the games
    as stored.

    Called after each server test (see server_fixtures.py): for every race room a client saw
    and every race (`gen`) of it that was dealt, the truth is read from Redis (the
    results of a finished race, or the seed and stored moves of one still going) and
    the client's frames of that race are audited. Daily rooms are audited per day and
    variant (`audit_daily`). Solo games are left out: they have no competitive stake,
    and undo rewrites their history.
    """
    from klondike_live import keys
    from klondike_live.race.room import RoomState

    checked = 0
    for client in clients:
        checked += await audit_queue(redis, client)
        checked += await audit_friends(redis, client)
        checked += audit_account_frames(client.received)
        checked += await _audit_client_daily(redis, client)
        rooms = {m["room"] for m in client.received if m.get("t") == "room"}
        for room_id in rooms:
            blob = _bytes(await redis.hget(keys.room(room_id), "state"))
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


QUEUE_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "queued": (frozenset({"t", "variant", "since", "waiting", "offer"}), frozenset({"rid"})),
    "matched": (frozenset({"t", "room", "variant"}), frozenset()),
    "unqueued": (frozenset({"t", "variant", "reason"}), frozenset({"rid"})),
}
"""The fields of each quick race frame: those always there, and those it may carry."""


async def audit_queue(redis: RedisClient, client: Receiver) -> int:
    """Check the quick race frames one client received (see the module docstring);
    how many."""
    from klondike_live import keys
    from klondike_live.race.room import RoomState

    checked = 0
    for index, message in enumerate(client.received):
        kind = message.get("t")
        if kind not in QUEUE_FIELDS:
            continue
        where = f"{client.user} frame {index} ({kind})"
        always, optional = QUEUE_FIELDS[kind]
        assert always <= message.keys() <= always | optional, f"{where}: fields {sorted(message)}"
        if kind == "matched":
            room_id = message["room"]
            earlier = [m for m in client.received[:index] if m.get("room") == room_id]
            assert not earlier, f"{where}: frames of room {room_id} before it was matched"
            blob = _bytes(await redis.hget(keys.room(room_id), "state"))
            if blob is not None:  # (a room of another store: a test's own Valkey)
                state = RoomState.from_blob(blob)
                assert state.kind == "race", f"{where}: a {state.kind} room"
                assert state.seat_of(client.user) is not None, f"{where}: not seated there"
                assert state.seed not in repr(message), f"{where}: the seed"
        checked += 1
    return checked


FRIEND_FIELDS: Final[dict[str, tuple[frozenset[str], frozenset[str]]]] = {
    "relation": (frozenset({"t", "user", "following", "blocked"}), frozenset({"rid"})),
    "friends": (frozenset({"t", "rid", "following", "followers", "blocked"}), frozenset()),
    "challenge_sent": (frozenset({"t", "user", "variant", "expires_at"}), frozenset({"rid"})),
    "challenged": (frozenset({"t", "user", "name", "variant", "expires_at"}), frozenset()),
    "challenge_ended": (frozenset({"t", "user", "reason"}), frozenset({"room"})),
}
"""The fields of each friends frame: those always there, and those it may carry."""

FRIEND_ENTRY: Final = (frozenset({"user", "name", "online"}), frozenset({"doing", "room"}))
PERSON: Final = frozenset({"user", "name"})


async def audit_friends(redis: RedisClient, client: Receiver) -> int:
    """Check the friends frames one client received (see the module docstring); how
    many."""
    from klondike_live import keys
    from klondike_live.race.room import RoomState

    checked = 0
    for index, message in enumerate(client.received):
        kind = message.get("t")
        if kind not in FRIEND_FIELDS:
            continue
        where = f"{client.user} frame {index} ({kind})"
        always, optional = FRIEND_FIELDS[kind]
        assert always <= message.keys() <= always | optional, f"{where}: fields {sorted(message)}"
        if kind == "friends":
            low, high = FRIEND_ENTRY
            for entry in message["following"]:
                assert low <= entry.keys() <= low | high, f"{where}: entry {entry}"
                if "room" in entry:  # only a public race room is named
                    blob = _bytes(await redis.hget(keys.room(entry["room"]), "state"))
                    if blob is not None:
                        shown = RoomState.from_blob(blob)
                        assert shown.public_room, f"{where}: a private room {entry}"
            for entry in (*message["followers"], *message["blocked"]):
                assert entry.keys() == PERSON, f"{where}: entry {entry}"
        if kind == "challenge_ended" and "room" in message:
            room_id = message["room"]
            assert message["reason"] == "accepted", f"{where}: a room for {message['reason']}"
            earlier = [m for m in client.received[:index] if m.get("room") == room_id]
            assert not earlier, f"{where}: frames of room {room_id} before it was made"
            blob = _bytes(await redis.hget(keys.room(room_id), "state"))
            if blob is not None:
                state = RoomState.from_blob(blob)
                assert state.kind == "race" and not state.public_room, f"{where}: {state.kind}"
                assert state.seat_of(client.user) is not None, f"{where}: not seated there"
                assert state.seed not in repr(message), f"{where}: the seed"
        checked += 1
    return checked


async def _truth(redis: RedisClient, state: RoomState, gen: int) -> Truth | None:
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
            moves[seat] = [_text(t) for t in tokens]
    return Truth(state.variant, state.seed, moves) if moves else None


async def _audit_client_daily(redis: RedisClient, client: Receiver) -> int:
    """Audit one client's frames of every daily challenge it saw a room of."""
    from klondike_live import keys
    from klondike_live.daily.leaderboard import DailyResult
    from klondike_live.daily.variants import variant_slug
    from klondike_live.race.room import RoomState

    ids = {m["room"] for m in client.received if isinstance(m.get("room"), str)}
    groups: dict[tuple[str, str], list[RoomState]] = {}
    for room_id in sorted(ids):
        blob = _bytes(await redis.hget(keys.room(room_id), "state"))
        if blob is None:
            continue
        state = RoomState.from_blob(blob)
        if state.kind == "daily" and state.seed:
            groups.setdefault((state.daily, str(state.variant)), []).append(state)
    times = getattr(client.received, "times", [])
    checked = 0
    for (day_text, _), states in groups.items():
        day = date.fromisoformat(day_text)
        seeds = {state.seed for state in states}
        assert len(seeds) == 1, f"daily rooms of {day_text} were dealt different deals"
        rooms = {}
        for state in states:
            occupant = state.seats[0]
            assert occupant is not None
            rooms[state.id] = DailyRoom(occupant.user, state.ranked, await _truth(redis, state, 1))
        entries = await redis.hgetall(keys.daily_entries(day_text, variant_slug(states[0].variant)))
        finished = {
            DailyResult.from_json(raw).user: DailyResult.from_json(raw).finished_at
            for raw in entries.values()
        }
        truth = DailyTruth(day, seeds.pop(), rooms, finished)
        checked += audit_daily(client.received, times, client.user, truth, day_closed_at(day))
    return checked


# ------------------------------------------------------------ HTTP answers


@dataclass(frozen=True)
class HttpAnswer:
    """One HTTP answer a test fetched: its path (no leading slash, no query), who asked
    (the account of a valid token, else None), when it arrived (wall clock), its status
    and its decoded JSON body."""

    path: str
    user: str | None
    at: float
    status: int
    body: Any


HTTP_ANSWERS: list[HttpAnswer] = []
"""Answers the test helpers fetched (`record_http`) and `audit_http` has not read yet."""

GAME_PATH = re.compile(r"^api/(results|replay)/([^/]+)/(\d+)$")
ANALYSIS_PATH = re.compile(r"^api/analysis/([^/]+)/(\d+)$")
PLAYERS_PATH = re.compile(r"^api/players/")
MATCH_PATH = re.compile(r"^api/matches/([^/]+)/(\d+)$")
CARD_FIELDS = frozenset({"seed", "deal", "record", "view", "start", "steps", "plies", "line"})
"""Fields that carry cards or what reveals them (a seed, a record, a board, a line):
a player's games, head-to-head and match answers carry none."""


def record_http(url: str, user: str | None, status: int, body: Any) -> None:
    """Remember an HTTP answer for `audit_http` (called by the tests' fetch helpers)."""
    path = urlsplit(url).path.lstrip("/")
    HTTP_ANSWERS.append(HttpAnswer(path, user, time.time(), status, body))


@dataclass(frozen=True)
class Asker:
    """What the account that fetched an answer may know of one finished game:
    `knows(seat, moves)`, the mask of board `seat` after its first `moves` moves, and
    whether the deal is still secret (no seed, deal text or game record may appear)."""

    knows: Callable[[int, int], int]
    deal_secret: bool

    @classmethod
    def everything(cls) -> Asker:
        """A finished race or solo game, or a daily game whose day has closed."""
        return cls(lambda _seat, _moves: ALL, deal_secret=False)

    @classmethod
    def as_played(cls, truth: Truth) -> Asker:
        """A daily game of an open day, for an account the spoiler gate lets in: each
        board as far as its own player had seen it after that many moves."""
        return cls(truth.seen, deal_secret=True)

    @classmethod
    def nothing(cls) -> Asker:
        """An account that may not see the game at all."""
        return cls(lambda _seat, _moves: 0, deal_secret=True)


def _strings(data: object) -> Iterable[str]:
    """Every string in decoded JSON, keys included."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, Mapping):
        for key, value in data.items():
            yield str(key)
            yield from _strings(value)
    elif isinstance(data, list | tuple):
        for item in data:
            yield from _strings(item)


def audit_answer(body: Mapping[str, Any], truth: Truth, asker: Asker, where: str = "answer") -> int:
    """Check one `/api/results/ROOM/GEN` or `/api/replay/ROOM/GEN` answer (or a daily
    results frame) against what `asker` may know of the game `truth`; return how many
    views and diffs were checked. Cards are the ints 0..51 of `view`, `start` and the
    step diffs `d`."""
    if asker.deal_secret:
        assert "seed" not in body and "deal" not in body, f"{where}: seed or deal of a secret deal"
        for text in _strings(body):
            assert truth.seed not in text, f"{where}: the seed of a secret deal"
            assert DEAL_HEADER not in text, f"{where}: the deal text of a secret deal"
            assert RECORD_HEADER not in text, f"{where}: a game record of a secret deal"
        daily = body.get("daily")
        if isinstance(daily, Mapping):
            assert daily.get("closed") is not True, f"{where}: claims its day closed; it had not"
    checked = 0
    for row in body.get("ranking", []):
        seat = row["seat"]
        if asker.deal_secret:
            assert "record" not in row, f"{where}: the game record of board {seat}"
        allowed = asker.knows(seat, len(truth.moves[seat]))
        shown = view_cards(row["view"])
        assert shown <= _mask_set(allowed), (
            f"{where}: the final board {seat} shows {_names(allowed, shown)}, which the "
            "asker may not know"
        )
        checked += 1
    for board in body.get("boards", []):
        seat = board["seat"]
        moves = list(truth.moves[seat])[truth.start :]
        assert [step["m"] for step in board["steps"]] == moves, f"{where}: board {seat} moves"
        allowed = asker.knows(seat, truth.start)
        shown = view_cards(board["start"])
        assert shown <= _mask_set(allowed), (
            f"{where}: board {seat} starts showing {_names(allowed, shown)}, which the asker "
            "may not know"
        )
        for index, step in enumerate(board["steps"]):
            allowed = asker.knows(seat, truth.start + index + 1)
            shown = diff_cards(step["d"])
            assert shown <= _mask_set(allowed), (
                f"{where}: step {index + 1} of board {seat} shows {_names(allowed, shown)}, "
                "which the asker may not know"
            )
        checked += 1 + len(board["steps"])
    return checked


async def _daily_seeds(redis: RedisClient) -> list[tuple[date, str]]:
    """Every prepared daily challenge's date and seed."""
    from klondike_live import keys

    out = []
    for member in await redis.zrange(keys.DAILY_INDEX, 0, -1):
        text = member.decode() if isinstance(member, bytes) else str(member)
        day_text, _, slug = text.partition("|")
        seed = await redis.hget(keys.daily_day(day_text, slug), "seed")
        if seed is not None:
            out.append((date.fromisoformat(day_text), _text(seed)))
    return out


async def _finished_at(redis: RedisClient, daily: Mapping[str, Any], user: str) -> int | None:
    """When `user`'s ranked attempt of a daily game's day and variant ended (its
    leaderboard entry's `finished_at`, ms), or None if it has no entry."""
    from klondike_live import keys
    from klondike_live.daily.leaderboard import DailyResult
    from klondike_live.daily.variants import variant_slug

    slug = variant_slug(Variant.parse(daily["variant"]))
    raw = await redis.hget(keys.daily_entries(daily["date"], slug), user)
    return None if raw is None else DailyResult.from_json(raw).finished_at


def _keys(data: object) -> Iterable[str]:
    """Every key of every object in decoded JSON."""
    if isinstance(data, Mapping):
        for key, value in data.items():
            yield str(key)
            yield from _keys(value)
    elif isinstance(data, list | tuple):
        for item in data:
            yield from _keys(item)


async def _stored_results(
    redis: RedisClient, history_url: str | None, room_id: str, gen: int
) -> bytes | None:
    """A finished game's stored results: in Valkey while cached, else in the history
    database (`history_url`)."""
    from klondike_live import keys
    from klondike_live.history import History

    data = await redis.hget(keys.results(room_id, gen), "data")
    if isinstance(data, bytes):
        return data
    if history_url is None:
        return None
    history = History.open(history_url)
    try:
        return await history.load_results(room_id, gen)
    finally:
        await history.close()


async def audit_http(redis: RedisClient, history_url: str | None = None) -> int:
    """Check every HTTP answer recorded since the last call against the games as
    stored (in Valkey, else in the history database at `history_url`); return how many
    views and diffs were checked (and forget the answers).

    - No answer carries the seed of a daily challenge whose day was open when it came.
    - A results or replay answer (200) exists only for a finished game (stored
      results), and shows a race's or solo game's everything; a daily game of a day
      still open is answered only to an account whose own ranked attempt of that day
      and variant had ended (its leaderboard entry), and then shows no seed, deal or
      game record, and each board (final view, replay start and every step) only as
      far as its own player had seen it at that point; after the close, everything.
    - An analysis answer (200 ready, 202 pending) exists only for a finished game, and
      never for a daily game whose day was open when it came (its lines and verdicts
      speak of cards its player had not seen).
    - A player's games, head-to-head or profile answer carries no card, seed, record
      or line.
    - Your data (`api/me/data`) carries no credential's secret, and each kept game in it
      as its results answer would show it to you (the checks above).
    - A match's answer (200) carries none either, and names only deals that are
      finished games (stored results) of its room.
    - Any other status carries nothing but `{"error": code}`.
    """
    import msgpack

    answers = list(HTTP_ANSWERS)
    HTTP_ANSWERS.clear()
    seeds = await _daily_seeds(redis)
    checked = 0
    for index, answer in enumerate(answers):
        where = f"HTTP answer {index} (/{answer.path}, for {answer.user or 'anonymous'})"
        for day, seed in seeds:
            if not day_closed_at(day)(answer.at):
                for text in _strings(answer.body):
                    assert seed not in text, f"{where}: the seed of the open day {day}"
        if PLAYERS_PATH.match(answer.path):
            if answer.status != 200:
                assert set(answer.body) == {"error"}, f"{where}: an error answer with more"
                continue
            found = CARD_FIELDS & set(_keys(answer.body))
            assert not found, f"{where}: a player's page with {sorted(found)}"
            checked += 1
            continue
        match = MATCH_PATH.match(answer.path)
        if match is not None:
            if answer.status != 200:
                assert set(answer.body) == {"error"}, f"{where}: an error answer with more"
                continue
            found = CARD_FIELDS & set(_keys(answer.body))
            assert not found, f"{where}: a match's record with {sorted(found)}"
            for deal in answer.body["deals"]:
                stored = await _stored_results(redis, history_url, match.group(1), deal["gen"])
                assert stored is not None, f"{where}: deal {deal['gen']} is no finished game"
            checked += 1
            continue
        analysis = ANALYSIS_PATH.match(answer.path)
        if analysis is not None:
            if answer.status not in (200, 202):
                assert set(answer.body) == {"error"}, f"{where}: an error answer with more"
                continue
            data = await _stored_results(
                redis, history_url, analysis.group(1), int(analysis.group(2))
            )
            assert data is not None, f"{where}: an analysis of a game that has no results"
            daily = msgpack.unpackb(data, raw=False).get("daily")
            if isinstance(daily, Mapping):
                day = date.fromisoformat(daily["date"])
                assert day_closed_at(day)(answer.at), f"{where}: the analysis of an open day"
            continue
        if answer.path == "api/me/data":
            checked += await _audit_my_data(redis, history_url, answer, where)
            continue
        game = GAME_PATH.match(answer.path)
        if game is None:
            continue
        if answer.status != 200:
            assert set(answer.body) == {"error"}, f"{where}: an error answer with more"
            continue
        checked += await _audit_game(
            redis, history_url, answer, answer.body, game.group(2), int(game.group(3)), where
        )
    return checked


SECRET_FIELDS: Final = frozenset({"token", "public_key", "password_hash", "secret"})
"""Fields a player's own data download never carries (its credentials' secrets)."""


async def _audit_my_data(
    redis: RedisClient, history_url: str | None, answer: HttpAnswer, where: str
) -> int:
    """`GET /api/me/data`: no secret of a credential, a password as a yes or no, the
    unfinished games without a card, and each kept game as its results answer would
    show it to the asker (`_audit_game`)."""
    if answer.status != 200:
        assert set(answer.body) == {"error"}, f"{where}: an error answer with more"
        return 0
    data = answer.body
    found = SECRET_FIELDS & set(_keys(data))
    assert not found, f"{where}: your data with {sorted(found)}"
    if data["account"] is not None:
        assert isinstance(data["account"]["password"], bool), f"{where}: a password's hash"
    found = CARD_FIELDS & set(_keys(data["unfinished"]))
    assert not found, f"{where}: unfinished games with {sorted(found)}"
    checked = 1
    for game in data["games"]:
        checked += await _audit_game(
            redis, history_url, answer, game["results"], game["room"], game["gen"], where
        )
    return checked


async def _audit_game(
    redis: RedisClient,
    history_url: str | None,
    answer: HttpAnswer,
    body: Any,
    room_id: str,
    gen: int,
    where: str,
) -> int:
    """One finished game's results or replay (`body`) as the asker may see it."""
    import msgpack

    data = await _stored_results(redis, history_url, room_id, gen)
    assert data is not None, f"{where}: answered for a game that has no results"
    results = msgpack.unpackb(data, raw=False)
    truth = Truth.from_results(results)
    daily = results.get("daily")
    asker = Asker.everything()
    if isinstance(daily, Mapping):
        day = date.fromisoformat(daily["date"])
        if not day_closed_at(day)(answer.at):
            finished = None
            if answer.user is not None:
                finished = await _finished_at(redis, daily, answer.user)
            assert finished is not None and finished <= answer.at * 1000, (
                f"{where}: a daily game of the open day {day} shown to an account "
                "whose own ranked attempt had not ended"
            )
            asker = Asker.as_played(truth)
        else:
            assert body.get("daily", {}).get("closed") is True, (
                f"{where}: a closed day's game not marked closed"
            )
    return audit_answer(body, truth, asker, where)


@pytest.fixture(autouse=True)
async def http_audit(valkey_url: str, test_database_url: str) -> AsyncIterator[None]:
    """Audit, after the test, every HTTP answer the test fetched (`audit_http`) against
    the shared test Valkey and the test's history database. Import it into a test module
    to use it there."""
    HTTP_ANSWERS.clear()
    yield
    if HTTP_ANSWERS:
        from klondike_live.embedded import open_redis

        client = await open_redis(valkey_url)
        try:
            await audit_http(client, test_database_url)
        finally:
            await client.aclose()
