"""Server -> client messages: one frame type per message, each encoded once.

Like the client's messages (`incoming`), every server message is a small frozen value
with a type of its own; `encode()` turns it into the frame's bytes, once, so a frame can
be stored in a stream, published on the bus and broadcast to many sockets as it is:

    frame = outgoing.Ack(room, move_id, offset).encode()

`T` is each type's wire `t`; `SERVER_FRAMES` lists them all, in the order of
docs/protocol.md, section 6. Optional fields given as None are absent on the wire.

Card identities only enter a frame through `view_wire` and `diff_wire`, which take
engine `View`/`ViewDiff` values already redacted for their audience, and through
`Results` (sent only when a race is over, under `race.redaction`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import msgpack

from klondike_live.engine import View, ViewDiff
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.incoming import PROTOCOL_VERSION
from klondike_live.protocol.kinds import BoardPosition


def _optional(data: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """`data` with each given field added unless it is None (absent on the wire)."""
    data.update((key, value) for key, value in fields.items() if value is not None)
    return data


def pack(message: dict[str, Any]) -> bytes:
    """Encode one message map (frames are encoded by their type's `encode`)."""
    data: bytes = msgpack.packb(message, use_bin_type=True)
    return data


def view_wire(view: View) -> dict[str, Any]:
    """A view as wire data: piles as [face_down, [card...]], cards 0..51 or -1 unknown."""
    return {
        "tableau": [
            [down, list(pile)] for pile, down in zip(view.tableau, view.face_down, strict=True)
        ],
        "waste": list(view.waste),
        "stock": view.stock,
        "foundations": list(view.foundations),
        "foundations_hidden": view.foundation_hidden,
        "pass": view.pass_number,
    }


def diff_wire(diff: ViewDiff) -> dict[str, Any]:
    """A view diff as wire data; absent keys are unchanged."""
    data: dict[str, Any] = {
        "piles": [[p, keep, down, list(cards)] for p, keep, down, cards in diff.piles]
    }
    if diff.stock is not None:
        data["stock"] = diff.stock
    if diff.foundations is not None:
        data["foundations"] = list(diff.foundations)
    if diff.foundation_hidden is not None:
        data["foundations_hidden"] = diff.foundation_hidden
    if diff.pass_number is not None:
        data["pass"] = diff.pass_number
    return data


def _board_fields(t: str, room: str, at: BoardPosition, moves: int, status: str) -> dict[str, Any]:
    return {
        "t": t,
        "room": room,
        "seat": at.seat,
        "audience": at.audience,
        "epoch": at.epoch,
        "off": at.offset,
        "moves": moves,
        "status": status,
    }


@dataclass(frozen=True, slots=True)
class Welcome:
    """The answer to `hello`: who the connection is, its token, the server's clock, and
    the account's username when the token is a signed-in session."""

    T: ClassVar[str] = "welcome"
    user: str
    name: str
    token: str
    now_ms: int
    username: str | None = None

    def encode(self) -> bytes:
        data = {
            "t": self.T,
            "v": PROTOCOL_VERSION,
            "user": self.user,
            "name": self.name,
            "token": self.token,
            "now": self.now_ms,
        }
        return pack(_optional(data, username=self.username))


@dataclass(frozen=True, slots=True)
class PasskeyChallenge:
    """The answer to `passkey_options`: WebAuthn options as JSON text (what
    `PublicKeyCredential.parseCreationOptionsFromJSON` or
    `parseRequestOptionsFromJSON` reads), valid for this connection only."""

    T: ClassVar[str] = "passkey_options"
    rid: int
    options: str
    create: bool

    def encode(self) -> bytes:
        return pack({"t": self.T, "rid": self.rid, "options": self.options, "create": self.create})


@dataclass(frozen=True, slots=True)
class SignedIn:
    """The answer to `register` and `sign_in`: the account and this device's new
    session token (the client reconnects with it)."""

    T: ClassVar[str] = "signed_in"
    rid: int
    user: str
    username: str
    token: str
    session: str

    def encode(self) -> bytes:
        return pack(
            {
                "t": self.T,
                "rid": self.rid,
                "user": self.user,
                "username": self.username,
                "token": self.token,
                "session": self.session,
            }
        )


@dataclass(frozen=True, slots=True)
class SignedOut:
    """The answer to `sign_out`: how many sessions ended."""

    T: ClassVar[str] = "signed_out"
    rid: int
    ended: int

    def encode(self) -> bytes:
        return pack({"t": self.T, "rid": self.rid, "ended": self.ended})


@dataclass(frozen=True, slots=True)
class BotToken:
    """The answer to `bot_create` and `bot_new_token`: the bot account and its new
    token, sent to its owner's asking connection only, and never again."""

    T: ClassVar[str] = "bot_token"
    rid: int
    user: str
    username: str
    token: str

    def encode(self) -> bytes:
        return pack(
            {
                "t": self.T,
                "rid": self.rid,
                "user": self.user,
                "username": self.username,
                "token": self.token,
            }
        )


@dataclass(frozen=True, slots=True)
class BotAccounts:
    """The answer to `bots` and `bot_delete`: the account's bot accounts (no tokens)."""

    T: ClassVar[str] = "bots"
    rid: int
    bots: list[dict[str, Any]]

    def encode(self) -> bytes:
        return pack({"t": self.T, "rid": self.rid, "bots": self.bots})


@dataclass(frozen=True, slots=True)
class AccountDeleted:
    """The answer to `delete_account`: the account is gone (its sessions ended first,
    so this connection closes with 4006 too); `games` kept for the other players."""

    T: ClassVar[str] = "account_deleted"
    rid: int
    games: int

    def encode(self) -> bytes:
        return pack({"t": self.T, "rid": self.rid, "games": self.games})


@dataclass(frozen=True, slots=True)
class Error:
    """A refusal: a stable code, a readable message, and the request it answers."""

    T: ClassVar[str] = "error"
    code: ErrorCode
    message: str
    rid: int | None = None
    room: str | None = None
    move_id: int | None = None

    @classmethod
    def answering(cls, request: object, code: ErrorCode, message: str) -> Error:
        """The error that answers a decoded `request`: it names the request's `rid`,
        `room` and move `id`, those it has."""
        return cls(
            code,
            message,
            rid=getattr(request, "rid", None),
            room=getattr(request, "room", None),
            move_id=getattr(request, "id", None),
        )

    def encode(self) -> bytes:
        data = {"t": self.T, "code": str(self.code), "msg": self.message}
        return pack(_optional(data, rid=self.rid, room=self.room, id=self.move_id))


@dataclass(frozen=True, slots=True)
class Pong:
    """The answer to `ping`, with the server's clock."""

    T: ClassVar[str] = "pong"
    rid: int | None
    now_ms: int

    def encode(self) -> bytes:
        return pack(_optional({"t": self.T, "now": self.now_ms}, rid=self.rid))


@dataclass(frozen=True, slots=True)
class Renamed:
    """The answer to `rename`: the name now shown for the connection (canonical form)."""

    T: ClassVar[str] = "renamed"
    name: str
    rid: int | None = None

    def encode(self) -> bytes:
        return pack(_optional({"t": self.T, "name": self.name}, rid=self.rid))


@dataclass(frozen=True, slots=True)
class Created:
    """The answer to `create`; a daily attempt's also says which (`daily`)."""

    T: ClassVar[str] = "created"
    rid: int
    room: str
    daily: dict[str, Any] | None = None

    def encode(self) -> bytes:
        return pack(_optional({"t": self.T, "rid": self.rid, "room": self.room}, daily=self.daily))


@dataclass(frozen=True, slots=True)
class Board:
    """A full snapshot of one board for one audience (`last_id`: the racer's last
    applied move id, and `score`, sent to the racer only)."""

    T: ClassVar[str] = "board"
    room: str
    at: BoardPosition
    view: View
    moves: int
    status: str
    score: int | None = None
    last_id: int | None = None

    def encode(self) -> bytes:
        data = _board_fields(self.T, self.room, self.at, self.moves, self.status)
        data["view"] = view_wire(self.view)
        return pack(_optional(data, score=self.score, last_id=self.last_id))


@dataclass(frozen=True, slots=True)
class Diff:
    """One event of a board stream: the change from the previous offset's view. In the
    racer's own stream, the event of an applied move (or undo) carries the client's
    move id (`move_id`): it is that move's acknowledgement."""

    T: ClassVar[str] = "diff"
    room: str
    at: BoardPosition
    change: ViewDiff
    moves: int
    move: str | None
    status: str
    score: int | None = None
    move_id: int | None = None

    def encode(self) -> bytes:
        data = _board_fields(self.T, self.room, self.at, self.moves, self.status)
        data["d"] = diff_wire(self.change)
        return pack(_optional(data, m=self.move, score=self.score, id=self.move_id))


@dataclass(frozen=True, slots=True)
class Ack:
    """A move id applied before: the racer's own board is at `off`."""

    T: ClassVar[str] = "ack"
    room: str
    move_id: int
    offset: int

    def encode(self) -> bytes:
        return pack({"t": self.T, "room": self.room, "id": self.move_id, "off": self.offset})


@dataclass(frozen=True, slots=True)
class Room:
    """The room's lobby or race state (its fields: docs/protocol.md, `room`), as
    `service.rooms.Rooms.room_frame` made it."""

    T: ClassVar[str] = "room"
    state: dict[str, Any]

    def encode(self) -> bytes:
        return pack({"t": self.T, **self.state})


@dataclass(frozen=True, slots=True)
class Progress:
    """Progress of every board, coalesced per tick: each board is `[seat, foundation
    cards, face-down cards, moves, status]`."""

    T: ClassVar[str] = "progress"
    room: str
    boards: Sequence[Sequence[Any]]
    spectators: int

    def encode(self) -> bytes:
        return pack(
            {
                "t": self.T,
                "room": self.room,
                "boards": [list(b) for b in self.boards],
                "spectators": self.spectators,
            }
        )


@dataclass(frozen=True, slots=True)
class Results:
    """The end of a race: ranking, seed, commitment, deal and records, as
    `race.redaction` shows them to the room (sent only when it is over)."""

    T: ClassVar[str] = "results"
    room: str
    payload: dict[str, Any]

    def encode(self) -> bytes:
        return pack({"t": self.T, "room": self.room, **self.payload})


@dataclass(frozen=True, slots=True)
class Hint:
    """A practice hint: the move to play (or None) and why."""

    T: ClassVar[str] = "hint"
    room: str
    rid: int
    move: str | None
    verdict: str
    message: str

    def encode(self) -> bytes:
        return pack(
            {
                "t": self.T,
                "room": self.room,
                "rid": self.rid,
                "m": self.move,
                "verdict": self.verdict,
                "msg": self.message,
            }
        )


@dataclass(frozen=True, slots=True)
class Finish:
    """Whether the rest of a practice game is forced (auto-completion may be offered)."""

    T: ClassVar[str] = "finish"
    room: str
    rid: int
    ok: bool

    def encode(self) -> bytes:
        return pack({"t": self.T, "room": self.room, "rid": self.rid, "ok": self.ok})


@dataclass(frozen=True, slots=True)
class DailyUpdate:
    """A day's leaderboard changed (or, with `rid`, its state when watching began)."""

    T: ClassVar[str] = "daily_update"
    day: str
    variant: str
    count: int
    rid: int | None = None

    def encode(self) -> bytes:
        data = {"t": self.T, "date": self.day, "variant": self.variant, "count": self.count}
        return pack(_optional(data, rid=self.rid))


@dataclass(frozen=True, slots=True)
class TournamentCreated:
    """A tournament was created: its id (the invite link's part)."""

    T: ClassVar[str] = "tournament_created"
    rid: int
    tournament: str

    def encode(self) -> bytes:
        return pack({"t": self.T, "rid": self.rid, "tournament": self.tournament})


@dataclass(frozen=True, slots=True)
class Tournament:
    """A tournament as everyone sees it (`race.tournament_view`): when watching began,
    after each change, and as the answer to a request about it (with its `rid`)."""

    T: ClassVar[str] = "tournament"
    view: dict[str, Any]
    rid: int | None = None

    def encode(self) -> bytes:
        return pack(_optional({"t": self.T, "tournament": self.view}, rid=self.rid))


@dataclass(frozen=True, slots=True)
class Queued:
    """Waiting in a quick race queue: since when (the place, ms on the server's clock),
    how many wait there, and whether racing the machine is offered (alone a while).
    The answer to `queue` (with its `rid`), and again whenever one of them changes."""

    T: ClassVar[str] = "queued"
    variant: str
    since_ms: int
    waiting: int
    offer: bool
    rid: int | None = None

    def encode(self) -> bytes:
        data = {
            "t": self.T,
            "variant": self.variant,
            "since": self.since_ms,
            "waiting": self.waiting,
            "offer": self.offer,
        }
        return pack(_optional(data, rid=self.rid))


@dataclass(frozen=True, slots=True)
class Matched:
    """A quick race was made with the player seated: join `room` as its racer."""

    T: ClassVar[str] = "matched"
    room: str
    variant: str

    def encode(self) -> bytes:
        return pack({"t": self.T, "room": self.room, "variant": self.variant})


@dataclass(frozen=True, slots=True)
class Unqueued:
    """No longer waiting in a quick race queue, and why: `left` (asked with `unqueue`)
    or `replaced` (another connection of the account took the place)."""

    T: ClassVar[str] = "unqueued"
    variant: str
    reason: str
    rid: int | None = None

    def encode(self) -> bytes:
        data = {"t": self.T, "variant": self.variant, "reason": self.reason}
        return pack(_optional(data, rid=self.rid))


@dataclass(frozen=True, slots=True)
class Reactions:
    """The reactions sent to a room lately (at most one frame per room and second):
    how many of each id, those with none left out."""

    T: ClassVar[str] = "reactions"
    room: str
    counts: Mapping[str, int]

    def encode(self) -> bytes:
        return pack({"t": self.T, "room": self.room, "counts": dict(self.counts)})


@dataclass(frozen=True, slots=True)
class Relation:
    """The answer to `follow`, `unfollow`, `block` and `unblock`: where the asker stands
    with `user` now."""

    T: ClassVar[str] = "relation"
    user: str
    following: bool
    blocked: bool
    rid: int | None = None

    def encode(self) -> bytes:
        data = {
            "t": self.T,
            "user": self.user,
            "following": self.following,
            "blocked": self.blocked,
        }
        return pack(_optional(data, rid=self.rid))


@dataclass(frozen=True, slots=True)
class Friends:
    """The answer to `friends`: `following` (each `{user, name, online}` and, while
    online, `doing` and a `room` it may reach), `followers` and `blocked` (each
    `{user, name}`)."""

    T: ClassVar[str] = "friends"
    rid: int
    following: list[dict[str, Any]]
    followers: list[dict[str, Any]]
    blocked: list[dict[str, Any]]

    def encode(self) -> bytes:
        return pack(
            {
                "t": self.T,
                "rid": self.rid,
                "following": self.following,
                "followers": self.followers,
                "blocked": self.blocked,
            }
        )


@dataclass(frozen=True, slots=True)
class ChallengeSent:
    """The answer to `challenge`: it waits for `user`'s answer until `expires_at`."""

    T: ClassVar[str] = "challenge_sent"
    user: str
    variant: str
    expires_at: int
    rid: int | None = None

    def encode(self) -> bytes:
        data = {
            "t": self.T,
            "user": self.user,
            "variant": self.variant,
            "expires_at": self.expires_at,
        }
        return pack(_optional(data, rid=self.rid))


@dataclass(frozen=True, slots=True)
class Challenged:
    """A challenge from `user` (shown as `name`), to every connection of the player
    challenged: answer with `challenge_answer` before `expires_at`."""

    T: ClassVar[str] = "challenged"
    user: str
    name: str
    variant: str
    expires_at: int

    def encode(self) -> bytes:
        return pack(
            {
                "t": self.T,
                "user": self.user,
                "name": self.name,
                "variant": self.variant,
                "expires_at": self.expires_at,
            }
        )


@dataclass(frozen=True, slots=True)
class ChallengeEnded:
    """The challenge between the receiver and `user` is over: `accepted` (both are
    seated in the race `room`: join it as its racer) or `declined`."""

    T: ClassVar[str] = "challenge_ended"
    user: str
    reason: str
    room: str | None = None

    def encode(self) -> bytes:
        data = {"t": self.T, "user": self.user, "reason": self.reason}
        return pack(_optional(data, room=self.room))


ServerFrame = (
    Welcome
    | PasskeyChallenge
    | SignedIn
    | SignedOut
    | BotToken
    | BotAccounts
    | Relation
    | Friends
    | ChallengeSent
    | Challenged
    | ChallengeEnded
    | AccountDeleted
    | Error
    | Pong
    | Renamed
    | Created
    | Board
    | Diff
    | Ack
    | Room
    | Progress
    | Reactions
    | Results
    | Hint
    | Finish
    | DailyUpdate
    | TournamentCreated
    | Tournament
    | Queued
    | Matched
    | Unqueued
)
"""Every server message."""

SERVER_FRAMES: Final[tuple[type[ServerFrame], ...]] = (
    Welcome,
    PasskeyChallenge,
    SignedIn,
    SignedOut,
    BotToken,
    BotAccounts,
    Relation,
    Friends,
    ChallengeSent,
    Challenged,
    ChallengeEnded,
    AccountDeleted,
    Error,
    Pong,
    Renamed,
    Created,
    Board,
    Diff,
    Ack,
    Room,
    Progress,
    Reactions,
    Results,
    Hint,
    Finish,
    DailyUpdate,
    TournamentCreated,
    Tournament,
    Queued,
    Matched,
    Unqueued,
)
