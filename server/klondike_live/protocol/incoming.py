"""Client -> server messages: strict decoding of msgpack frames into typed values.

`decode_client(frame)` is the only way a client's bytes enter the server. It checks the
frame is a msgpack map with a known `t`, that every field is present when required,
of the right type and range, and that no unknown field is present. Anything else raises
`ProtocolError` with a stable code and a readable message that never echoes more than
a short excerpt of the input. Nothing downstream handles raw dicts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any, Final

import msgpack

from klondike_live.auth import validate_display_name
from klondike_live.engine import NotationError, Variant
from klondike_live.errors import Refusal
from klondike_live.protocol.codes import ErrorCode
from klondike_live.protocol.kinds import (
    BEST_OF,
    BotLevel,
    DealMode,
    Reaction,
    Role,
    RoomKind,
    TournamentFormat,
)

PROTOCOL_VERSION: Final = 1
MAX_SAFE_INT: Final = 2**53 - 1
ROOM_ID_MAX: Final = 64
MAX_SEATS: Final = 100
"""Seats a room may have: up to 8 in a race a player creates, up to 100 in a
tournament's heat (so also a tournament's entrants, its `cap`)."""
MAX_HEATS: Final = 10
"""Heats a tournament of the heats format may have (`tournament_create`'s `heats`)."""
DEAL_MODES: Final = tuple(DealMode)
_ISO_DATE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class ProtocolError(Refusal):
    """A frame that breaks the protocol: `code` for programs, `message` for people, and
    the request's `rid` when it could be read."""

    def __init__(self, code: ErrorCode, message: str, *, rid: int | None = None) -> None:
        super().__init__(code, message)
        self.rid = rid


@dataclass(frozen=True, slots=True)
class Hello:
    version: int
    token: str | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Create:
    rid: int
    kind: RoomKind
    variant: Variant
    seats: int
    time_limit: int  # seconds, 0 for none
    public: bool
    deal: DealMode = DealMode.CERTIFIED
    seed: str | None = None  # a solo game from a given position: the deal's seed
    prefix: tuple[str, ...] = ()  # ... and the moves made from it before the start
    bots: bool = False  # bots may take seats (a race only)
    machine: BotLevel | None = None  # "race the machine": one bot of that level, autostart
    join: bool = False  # the creator joins as racer at once (a solo game only)
    best_of: int = 1  # a race that is a match of 3, 5 or 7 deals (`race.match`)


MAX_PREFIX = 2000
"""Moves a solo game's start position may be given by (`create`'s `moves`)."""


@dataclass(frozen=True, slots=True)
class Since:
    """A viewer's last seen event of one board: its seat, stream epoch and offset."""

    seat: int
    epoch: int
    offset: int


@dataclass(frozen=True, slots=True)
class Join:
    room: str
    role: Role
    since: tuple[Since, ...] = ()
    rid: int | None = None
    # Whether `reactions` frames of the room reach this connection; None: the role's
    # default (a spectator's on, a racer's off).
    reactions: bool | None = None


@dataclass(frozen=True, slots=True)
class Leave:
    room: str


@dataclass(frozen=True, slots=True)
class Ready:
    room: str
    ready: bool


@dataclass(frozen=True, slots=True)
class Start:
    room: str


@dataclass(frozen=True, slots=True)
class MoveRequest:
    room: str
    id: int
    move: str


@dataclass(frozen=True, slots=True)
class Undo:
    room: str
    id: int


@dataclass(frozen=True, slots=True)
class Resign:
    room: str


@dataclass(frozen=True, slots=True)
class HintRequest:
    room: str
    rid: int


@dataclass(frozen=True, slots=True)
class FinishRequest:
    room: str
    rid: int


@dataclass(frozen=True, slots=True)
class Rematch:
    room: str


@dataclass(frozen=True, slots=True)
class AddBot:
    """The host seats an in-server bot racer of `level` (lobby of a race allowing bots)."""

    room: str
    level: BotLevel
    rid: int | None = None


@dataclass(frozen=True, slots=True)
class RemoveBot:
    """The host takes the bot in `seat` off its seat (lobby of a race)."""

    room: str
    seat: int
    rid: int | None = None


@dataclass(frozen=True, slots=True)
class Queue:
    """Wait in the quick race queue of `variant` (`race.quick`)."""

    variant: Variant
    rid: int | None = None


@dataclass(frozen=True, slots=True)
class React:
    """A spectator (or a racer whose board is done) sends one reaction to the room."""

    room: str
    reaction: Reaction
    rid: int | None = None


@dataclass(frozen=True, slots=True)
class Unqueue:
    """Stop waiting in the quick race queue."""

    rid: int | None = None


@dataclass(frozen=True, slots=True)
class ShowReactions:
    """Whether the room's `reactions` frames reach this connection from now on."""

    room: str
    on: bool
    rid: int | None = None


@dataclass(frozen=True, slots=True)
class Ping:
    rid: int | None = None


@dataclass(frozen=True, slots=True)
class Rename:
    """A new display name for the connection and its seats (`name` canonical, checked
    as `hello`'s is)."""

    name: str
    rid: int | None = None


@dataclass(frozen=True, slots=True)
class DailyWatch:
    """Ask for `daily_update` frames of one day's leaderboard."""

    date: date
    variant: Variant
    rid: int | None = None


@dataclass(frozen=True, slots=True)
class DailyUnwatch:
    date: date
    variant: Variant
    rid: int | None = None


@dataclass(frozen=True, slots=True)
class TournamentCreate:
    """A signed-in player organizes a tournament (`race.tournament` checks the rest)."""

    rid: int
    name: str
    format: TournamentFormat
    variants: tuple[Variant, ...]
    public: bool
    cap: int
    closes_at: int  # registration closes (ms)
    opens_at: int | None = None  # registration opens (ms); now when absent
    first_day: date | None = None  # a series' dates, inclusive
    last_day: date | None = None
    start_at: int = 0  # heats: the first heat's start (ms)
    heats: int = 0
    pause: int = 0  # heats: seconds between a heat's end and the next one's start
    time_limit: int = 0  # heats: each heat's time limit (s)


@dataclass(frozen=True, slots=True)
class TournamentEnter:
    tournament: str
    rid: int | None = None


@dataclass(frozen=True, slots=True)
class TournamentWithdraw:
    tournament: str
    rid: int | None = None


TOURNAMENT_ACTIONS: Final = ("open", "close", "remove", "start_heat", "cancel")


@dataclass(frozen=True, slots=True)
class TournamentAction:
    """An organizer's action (`user`: the entrant to remove)."""

    tournament: str
    action: str
    user: str | None = None
    rid: int | None = None


@dataclass(frozen=True, slots=True)
class TournamentWatch:
    tournament: str
    rid: int | None = None


@dataclass(frozen=True, slots=True)
class TournamentUnwatch:
    tournament: str
    rid: int | None = None


@dataclass(frozen=True, slots=True)
class PasskeyOptions:
    """Ask for a passkey challenge: to make this guest an account of `username`, or
    (no username) to sign in with a passkey."""

    rid: int
    username: str | None = None


@dataclass(frozen=True, slots=True)
class Register:
    """Make this guest an account: a username and a password, or the answer to the
    connection's passkey challenge (`passkey`, `PublicKeyCredential.toJSON()` text)."""

    rid: int
    username: str
    password: str | None = None
    passkey: str | None = None


@dataclass(frozen=True, slots=True)
class SignIn:
    """Sign this device in: a username and a password, or a passkey answer."""

    rid: int
    username: str | None = None
    password: str | None = None
    passkey: str | None = None


@dataclass(frozen=True, slots=True)
class SignOut:
    """End a session of this account: `session` (an id), this connection's own (no
    `session`), or every one of them (`everywhere`)."""

    rid: int
    session: str | None = None
    everywhere: bool = False


@dataclass(frozen=True, slots=True)
class BotList:
    """List this account's bot accounts (`service.bot_accounts`)."""

    rid: int


@dataclass(frozen=True, slots=True)
class BotCreate:
    """Create a bot account of this account, named `username`."""

    rid: int
    username: str


@dataclass(frozen=True, slots=True)
class BotNewToken:
    """Issue a new token for this account's bot `user` (its old token ends)."""

    rid: int
    user: str


@dataclass(frozen=True, slots=True)
class BotDelete:
    """Delete this account's bot `user` (its tokens end; its games stay)."""

    rid: int
    user: str


@dataclass(frozen=True, slots=True)
class Relate:
    """Follow, unfollow, block or unblock a player (`service.friends`); `name` is the
    name the asker saw it under (kept for a guest, whose name no table holds)."""

    user: str
    name: str | None = None
    rid: int | None = None

    @property
    def action(self) -> str:
        """The request's `t`: what it asks."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Follow(Relate):
    @property
    def action(self) -> str:
        return "follow"


@dataclass(frozen=True, slots=True)
class Unfollow(Relate):
    @property
    def action(self) -> str:
        return "unfollow"


@dataclass(frozen=True, slots=True)
class Block(Relate):
    @property
    def action(self) -> str:
        return "block"


@dataclass(frozen=True, slots=True)
class Unblock(Relate):
    @property
    def action(self) -> str:
        return "unblock"


@dataclass(frozen=True, slots=True)
class FriendsList:
    """The asker's friends: whom it follows (with their presence), who follows it, and
    whom it blocked."""

    rid: int


@dataclass(frozen=True, slots=True)
class Challenge:
    """Challenge a followed player who is online to a race of `variant`."""

    user: str
    variant: Variant
    rid: int | None = None


@dataclass(frozen=True, slots=True)
class ChallengeAnswer:
    """Accept or decline the challenge that `user` sent."""

    user: str
    accept: bool
    rid: int | None = None


FriendRequest = Follow | Unfollow | Block | Unblock | FriendsList | Challenge | ChallengeAnswer
"""The requests about friends (`service.friends`)."""


@dataclass(frozen=True, slots=True)
class DeleteAccount:
    """Delete this connection's account: its username typed again, as confirmation."""

    rid: int
    username: str


BotRequest = BotList | BotCreate | BotNewToken | BotDelete
"""Requests about the bot accounts an account owns (`service.bot_accounts`)."""

AccountRequest = PasskeyOptions | Register | SignIn | SignOut | DeleteAccount | BotRequest
"""Requests about who the connection is: the gateway answers them (`gateway.session`),
as it does `hello`, with what only the transport knows (the page's origin, the
address, the session the token names)."""

TournamentRequest = (
    TournamentEnter | TournamentWithdraw | TournamentAction | TournamentWatch | TournamentUnwatch
)
"""The requests about a tournament that already exists."""

ServiceRequest = (
    Create
    | Join
    | Leave
    | Ready
    | Start
    | MoveRequest
    | Undo
    | Resign
    | HintRequest
    | FinishRequest
    | Rematch
    | AddBot
    | RemoveBot
    | Queue
    | Unqueue
    | React
    | ShowReactions
    | Rename
    | DailyWatch
    | DailyUnwatch
    | TournamentCreate
    | TournamentRequest
    | FriendRequest
)
"""What the live service answers: every client message but the transport's own (`hello`,
`ping`, `AccountRequest`). A new request is added here and handled in
`LiveService.handle`, nowhere else."""

ClientMessage = Hello | Ping | AccountRequest | ServiceRequest
"""Every client message."""


class _Fields:
    """Typed access to one decoded map; records which keys were read."""

    def __init__(self, data: dict[str, Any], kind: str) -> None:
        self.data = data
        self.kind = kind
        self.read = {"t"}
        rid = data.get("rid")
        self.rid = rid if isinstance(rid, int) and not isinstance(rid, bool) else None

    def fail(self, key: str, expected: str) -> ProtocolError:
        return ProtocolError(
            ErrorCode.BAD_FIELD, f"{self.kind}: field {key!r} must be {expected}", rid=self.rid
        )

    def get(self, key: str, required: bool) -> Any:
        self.read.add(key)
        if key not in self.data:
            if required:
                raise ProtocolError(
                    ErrorCode.BAD_FIELD, f"{self.kind}: missing field {key!r}", rid=self.rid
                )
            return None
        return self.data[key]

    def integer(self, key: str, lo: int, hi: int, *, required: bool = True) -> int | None:
        value = self.get(key, required)
        if value is None and not required:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.fail(key, f"an integer {lo}..{hi}")
        return value

    def req_int(self, key: str, lo: int, hi: int) -> int:
        value = self.integer(key, lo, hi)
        assert value is not None
        return value

    def text(self, key: str, max_len: int, *, required: bool = True) -> str | None:
        value = self.get(key, required)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not 0 < len(value) <= max_len:
            raise self.fail(key, f"a string of 1..{max_len} characters")
        return value

    def string(self, key: str) -> str | None:
        """An optional field that must be a string of any length (possibly empty): its
        content is judged later, with its own error code."""
        value = self.get(key, False)
        if value is not None and not isinstance(value, str):
            raise self.fail(key, "a string")
        return value

    def req_str(self, key: str, max_len: int) -> str:
        value = self.text(key, max_len)
        assert value is not None
        return value

    def flag(self, key: str, *, default: bool | None = None) -> bool:
        value = self.get(key, default is None)
        if value is None:
            assert default is not None
            return default
        if not isinstance(value, bool):
            raise self.fail(key, "true or false")
        return value

    def choice(self, key: str, options: tuple[str, ...]) -> str:
        value = self.get(key, True)
        if value not in options:
            raise self.fail(key, "one of " + ", ".join(repr(o) for o in options))
        assert isinstance(value, str)
        return value

    def optional_rid(self) -> int | None:
        """The request id any message may carry (protocol §5), checked like any field."""
        return self.integer("rid", 0, MAX_SAFE_INT, required=False)

    def done(self) -> None:
        if "rid" not in self.read:
            self.optional_rid()
        extra = sorted(str(k) for k in self.data if k not in self.read)
        if extra:
            raise ProtocolError(
                ErrorCode.BAD_FIELD,
                f"{self.kind}: unknown field {extra[0][:32]!r}",
                rid=self.rid,
            )


def _room(f: _Fields) -> str:
    return f.req_str("room", ROOM_ID_MAX)


def _hello(f: _Fields) -> Hello:
    # Any string is a token or a name here: one the server refuses (empty, too long,
    # malformed) is `token_invalid` or `bad_name` like any other, not `bad_field`.
    return Hello(
        version=f.req_int("v", 0, 1_000_000),
        token=f.string("token"),
        name=f.string("name"),
    )


def _rename(f: _Fields) -> Rename:
    value = f.get("name", True)
    if not isinstance(value, str):
        raise f.fail("name", "a string")
    try:
        name = validate_display_name(value)
    except ValueError as exc:
        raise ProtocolError(ErrorCode.BAD_NAME, f"rename: {exc}", rid=f.rid) from None
    return Rename(name=name, rid=f.optional_rid())


USER_ID_MAX: Final = 128


def _relation(f: _Fields, action: str) -> tuple[str, str | None, int | None]:
    """The fields of `follow`, `unfollow`, `block` and `unblock`: the user, the name the
    asker saw it under (checked as a display name), the rid."""
    user = f.req_str("user", USER_ID_MAX)
    value = f.string("name")
    name = None
    if value is not None:
        try:
            name = validate_display_name(value)
        except ValueError as exc:
            raise ProtocolError(ErrorCode.BAD_NAME, f"{action}: {exc}", rid=f.rid) from None
    return user, name, f.optional_rid()


MAX_PASSWORD: Final = 1024
MAX_PASSKEY_ANSWER: Final = 16_384


def _credentials(f: _Fields, kind: str) -> tuple[str | None, str | None]:
    """The password or the passkey answer of a `register` or `sign_in`: exactly one."""
    password = f.text("password", MAX_PASSWORD, required=False)
    passkey = f.text("passkey", MAX_PASSKEY_ANSWER, required=False)
    if (password is None) == (passkey is None):
        raise ProtocolError(
            ErrorCode.BAD_FIELD, f"{kind}: give a password or a passkey, one of them", rid=f.rid
        )
    return password, passkey


def _register(f: _Fields) -> Register:
    password, passkey = _credentials(f, "register")
    return Register(
        rid=f.req_int("rid", 0, MAX_SAFE_INT),
        username=f.req_str("username", 64),
        password=password,
        passkey=passkey,
    )


def _sign_in(f: _Fields) -> SignIn:
    password, passkey = _credentials(f, "sign_in")
    username = f.text("username", 64, required=password is not None)
    if passkey is not None and username is not None:
        raise f.fail("username", "absent with a passkey (it names its account)")
    return SignIn(
        rid=f.req_int("rid", 0, MAX_SAFE_INT),
        username=username,
        password=password,
        passkey=passkey,
    )


def _sign_out(f: _Fields) -> SignOut:
    session = f.text("session", 64, required=False)
    everywhere = f.flag("everywhere", default=False)
    if session is not None and everywhere:
        raise f.fail("session", "absent with everywhere")
    return SignOut(rid=f.req_int("rid", 0, MAX_SAFE_INT), session=session, everywhere=everywhere)


def _variant(f: _Fields) -> Variant:
    text = f.req_str("variant", 64)
    try:
        variant = Variant.parse(text)
    except NotationError as exc:
        raise f.fail("variant", f"a variant such as 'draw=3 passes=3 f2t=no' ({exc})") from None
    if not variant.unlimited and variant.passes > 99:
        raise f.fail("variant", "a variant with at most 99 passes")
    return variant


def _create(f: _Fields) -> Create:
    rid = f.req_int("rid", 0, MAX_SAFE_INT)
    kind = RoomKind(f.choice("kind", tuple(RoomKind)))
    variant = _variant(f)
    seats = f.integer("seats", 1, 8, required=False)
    if kind is RoomKind.RACE:
        if seats is None or seats < 2:
            raise f.fail("seats", "2..8 for a race")
    elif kind is RoomKind.DAILY:
        if seats is not None:
            raise f.fail("seats", "absent for a daily attempt")
    elif seats not in (None, 1):
        raise f.fail("seats", "1 (or absent) for a solo game")
    time_limit = f.integer("time_limit", 0, 86_400, required=False) or 0
    public = f.flag("public", default=False)
    deal = f.get("deal", False)
    if deal is None:
        deal = DealMode.CERTIFIED
    elif deal not in DEAL_MODES:
        raise f.fail("deal", "'certified' or 'any'")
    if kind is RoomKind.DAILY:
        if time_limit:
            raise f.fail("time_limit", "absent or 0 for a daily attempt (its limit is fixed)")
        if public:
            raise f.fail("public", "false (or absent) for a daily attempt")
        if deal != "certified":
            raise f.fail("deal", "'certified' (or absent) for a daily attempt")
    seed = f.text("seed", 200, required=False)
    moves = f.get("moves", False)
    if moves is not None:
        if (
            not isinstance(moves, list)
            or len(moves) > MAX_PREFIX
            or not all(isinstance(m, str) and 0 < len(m) <= 8 for m in moves)
        ):
            raise f.fail("moves", f"a list of at most {MAX_PREFIX} move tokens")
        if seed is None:
            raise f.fail("seed", "given with 'moves' (the deal they are played on)")
    if seed is not None and kind is not RoomKind.SOLO:
        raise f.fail("seed", "absent except for a solo game")
    bots = f.flag("bots", default=False)
    if bots and kind is not RoomKind.RACE:
        raise f.fail("bots", "false (or absent) unless the room is a race")
    machine = None
    if f.get("machine", False) is not None:
        machine = BotLevel(f.choice("machine", tuple(BotLevel)))
        if kind is not RoomKind.RACE or seats != 2 or not bots:
            raise f.fail("machine", "absent unless the room is a 2-seat race allowing bots")
    join = f.flag("join", default=False)
    if join and kind is not RoomKind.SOLO:
        raise f.fail("join", "false (or absent) unless the room is a solo game")
    best_of = f.integer("best_of", 1, 7, required=False) or 1
    if best_of not in BEST_OF:
        raise f.fail("best_of", "1, 3, 5 or 7")
    if best_of > 1 and kind is not RoomKind.RACE:
        raise f.fail("best_of", "1 (or absent) unless the room is a race")
    return Create(
        rid=rid,
        kind=kind,
        variant=variant,
        seats=seats if seats is not None else 1,
        time_limit=time_limit,
        public=public,
        deal=DealMode(deal),
        seed=seed,
        prefix=tuple(moves or ()),
        bots=bots,
        machine=machine,
        join=join,
        best_of=best_of,
    )


def _day(f: _Fields, key: str = "date") -> date:
    text = f.req_str(key, 10)
    try:
        if not _ISO_DATE.match(text):
            raise ValueError(text)
        return date.fromisoformat(text)
    except ValueError:
        raise f.fail(key, "a date YYYY-MM-DD") from None


MAX_TOURNAMENT_NAME: Final = 60
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


def _tournament_create(f: _Fields) -> TournamentCreate:
    rid = f.req_int("rid", 0, MAX_SAFE_INT)
    name = f.req_str("name", MAX_TOURNAMENT_NAME).strip()
    if not name or _CONTROL.search(name):
        raise f.fail("name", f"1..{MAX_TOURNAMENT_NAME} printable characters")
    form = TournamentFormat(f.choice("format", tuple(TournamentFormat)))
    raw = f.get("variants", True)
    if not isinstance(raw, list) or not 1 <= len(raw) <= 2:
        raise f.fail("variants", "a list of 1 or 2 variants")
    variants: list[Variant] = []
    for text in raw:
        try:
            if not isinstance(text, str) or len(text) > 64:
                raise NotationError("not a variant")
            variants.append(Variant.parse(text))
        except NotationError:
            raise f.fail("variants", "variants such as 'draw=1 passes=1 f2t=no'") from None
    if len(set(variants)) != len(variants):
        raise f.fail("variants", "different variants")
    public = f.flag("public", default=False)
    cap = f.integer("cap", 2, MAX_SEATS, required=False) or MAX_SEATS
    opens_at = f.integer("opens_at", 0, MAX_SAFE_INT, required=False)
    closes_at = f.req_int("closes_at", 0, MAX_SAFE_INT)
    first_day = last_day = None
    start_at = heats = pause = time_limit = 0
    if form is TournamentFormat.SERIES:
        for absent in ("start_at", "heats", "pause", "time_limit"):
            if f.get(absent, False) is not None:
                raise f.fail(absent, "absent for a series")
        first_day, last_day = _day(f, "from"), _day(f, "to")
    else:
        for absent in ("from", "to"):
            if f.get(absent, False) is not None:
                raise f.fail(absent, "absent for heats")
        if len(variants) != 1:
            raise f.fail("variants", "one variant for heats")
        start_at = f.req_int("start_at", 0, MAX_SAFE_INT)
        heats = f.req_int("heats", 1, MAX_HEATS)
        pause = f.integer("pause", 10, 3600, required=False) or 60
        time_limit = f.integer("time_limit", 60, 3600, required=False) or 600
    return TournamentCreate(
        rid=rid,
        name=name,
        format=form,
        variants=tuple(variants),
        public=public,
        cap=cap,
        closes_at=closes_at,
        opens_at=opens_at,
        first_day=first_day,
        last_day=last_day,
        start_at=start_at,
        heats=heats,
        pause=pause,
        time_limit=time_limit,
    )


def _tournament_id(f: _Fields) -> str:
    return f.req_str("tournament", ROOM_ID_MAX)


def _tournament_action(f: _Fields) -> TournamentAction:
    action = f.choice("action", TOURNAMENT_ACTIONS)
    user = f.text("user", 128, required=False)
    if (action == "remove") != (user is not None):
        raise f.fail("user", "given with 'remove' only (the entrant to remove)")
    return TournamentAction(
        tournament=_tournament_id(f),
        action=action,
        user=user,
        rid=f.optional_rid(),
    )


def _since(f: _Fields) -> tuple[Since, ...]:
    value = f.get("since", False)
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_SEATS:
        raise f.fail("since", f"a list of at most {MAX_SEATS} [seat, epoch, offset] triples")
    out = []
    for item in value:
        if (
            not isinstance(item, list)
            or len(item) != 3
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in item)
            or not 0 <= item[0] < MAX_SEATS
            or not 0 <= item[1] <= MAX_SAFE_INT
            or not 0 <= item[2] <= MAX_SAFE_INT
        ):
            raise f.fail(
                "since", f"a list of [seat 0..{MAX_SEATS - 1}, epoch >= 0, offset >= 0] triples"
            )
        out.append(Since(item[0], item[1], item[2]))
    return tuple(out)


def _join(f: _Fields) -> Join:
    reactions = f.get("reactions", False)
    if reactions is not None and not isinstance(reactions, bool):
        raise f.fail("reactions", "true or false")
    return Join(
        room=_room(f),
        role=Role(f.choice("as", tuple(Role))),
        since=_since(f),
        rid=f.optional_rid(),
        reactions=reactions,
    )


def _move(f: _Fields) -> MoveRequest:
    return MoveRequest(room=_room(f), id=f.req_int("id", 1, MAX_SAFE_INT), move=f.req_str("m", 8))


_DECODERS: Final[dict[str, Callable[[_Fields], ClientMessage]]] = {
    "hello": _hello,
    "create": _create,
    "join": _join,
    "leave": lambda f: Leave(room=_room(f)),
    "ready": lambda f: Ready(room=_room(f), ready=f.flag("ready")),
    "start": lambda f: Start(room=_room(f)),
    "move": _move,
    "undo": lambda f: Undo(room=_room(f), id=f.req_int("id", 1, MAX_SAFE_INT)),
    "resign": lambda f: Resign(room=_room(f)),
    "hint": lambda f: HintRequest(room=_room(f), rid=f.req_int("rid", 0, MAX_SAFE_INT)),
    "finish": lambda f: FinishRequest(room=_room(f), rid=f.req_int("rid", 0, MAX_SAFE_INT)),
    "rematch": lambda f: Rematch(room=_room(f)),
    "add_bot": lambda f: AddBot(
        room=_room(f),
        level=BotLevel(f.choice("level", tuple(BotLevel))),
        rid=f.optional_rid(),
    ),
    "remove_bot": lambda f: RemoveBot(
        room=_room(f), seat=f.req_int("seat", 0, MAX_SEATS - 1), rid=f.optional_rid()
    ),
    "queue": lambda f: Queue(variant=_variant(f), rid=f.optional_rid()),
    "unqueue": lambda f: Unqueue(rid=f.optional_rid()),
    "react": lambda f: React(
        room=_room(f), reaction=Reaction(f.choice("r", tuple(Reaction))), rid=f.optional_rid()
    ),
    "show_reactions": lambda f: ShowReactions(room=_room(f), on=f.flag("on"), rid=f.optional_rid()),
    "rename": _rename,
    "ping": lambda f: Ping(rid=f.optional_rid()),
    "daily_watch": lambda f: DailyWatch(_day(f), _variant(f), f.optional_rid()),
    "daily_unwatch": lambda f: DailyUnwatch(_day(f), _variant(f), f.optional_rid()),
    "tournament_create": _tournament_create,
    "tournament_enter": lambda f: TournamentEnter(_tournament_id(f), f.optional_rid()),
    "tournament_withdraw": lambda f: TournamentWithdraw(_tournament_id(f), f.optional_rid()),
    "tournament_action": _tournament_action,
    "tournament_watch": lambda f: TournamentWatch(_tournament_id(f), f.optional_rid()),
    "tournament_unwatch": lambda f: TournamentUnwatch(_tournament_id(f), f.optional_rid()),
    "passkey_options": lambda f: PasskeyOptions(
        rid=f.req_int("rid", 0, MAX_SAFE_INT), username=f.text("username", 64, required=False)
    ),
    "register": _register,
    "sign_in": _sign_in,
    "sign_out": _sign_out,
    "bots": lambda f: BotList(rid=f.req_int("rid", 0, MAX_SAFE_INT)),
    "bot_create": lambda f: BotCreate(
        rid=f.req_int("rid", 0, MAX_SAFE_INT), username=f.req_str("username", 64)
    ),
    "bot_new_token": lambda f: BotNewToken(
        rid=f.req_int("rid", 0, MAX_SAFE_INT), user=f.req_str("user", USER_ID_MAX)
    ),
    "bot_delete": lambda f: BotDelete(
        rid=f.req_int("rid", 0, MAX_SAFE_INT), user=f.req_str("user", USER_ID_MAX)
    ),
    "follow": lambda f: Follow(*_relation(f, "follow")),
    "unfollow": lambda f: Unfollow(*_relation(f, "unfollow")),
    "block": lambda f: Block(*_relation(f, "block")),
    "unblock": lambda f: Unblock(*_relation(f, "unblock")),
    "friends": lambda f: FriendsList(rid=f.req_int("rid", 0, MAX_SAFE_INT)),
    "challenge": lambda f: Challenge(
        user=f.req_str("user", USER_ID_MAX), variant=_variant(f), rid=f.optional_rid()
    ),
    "challenge_answer": lambda f: ChallengeAnswer(
        user=f.req_str("user", USER_ID_MAX), accept=f.flag("accept"), rid=f.optional_rid()
    ),
    "delete_account": lambda f: DeleteAccount(
        rid=f.req_int("rid", 0, MAX_SAFE_INT), username=f.req_str("username", 64)
    ),
}

CLIENT_TYPES: Final = tuple(_DECODERS)


def unpack(frame: bytes) -> dict[str, Any]:
    """Decode one msgpack map with string keys, or raise ProtocolError(MALFORMED)."""
    try:
        data = msgpack.unpackb(
            frame,
            raw=False,
            strict_map_key=True,
            use_list=True,
        )
    except Exception as exc:  # msgpack raises many types on bad input; all mean the same
        raise ProtocolError(
            ErrorCode.MALFORMED, f"not a msgpack frame ({type(exc).__name__})"
        ) from None
    if not isinstance(data, dict):
        raise ProtocolError(ErrorCode.MALFORMED, "a message is a msgpack map")
    if not all(isinstance(k, str) for k in data):
        raise ProtocolError(ErrorCode.MALFORMED, "message keys are strings")
    return data


def decode_client(frame: bytes) -> ClientMessage:
    """Decode and validate one client frame into its message value."""
    data = unpack(frame)
    kind = data.get("t")
    decoder = _DECODERS.get(kind) if isinstance(kind, str) else None
    if decoder is None:
        shown = repr(kind)[:40]
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"unknown message type {shown}")
    fields = _Fields(data, str(kind))
    message = decoder(fields)
    fields.done()
    return message
