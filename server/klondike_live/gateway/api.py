"""The HTTP JSON API's routes: paths and query parameters in, the service's answers out.

    GET /api/rooms                                public races waiting in their lobby
    GET /api/live                                 public games being played now (no
                                                  cards, no seeds)
    GET /api/results                              recently finished public games
    GET /api/results/<room>/<gen>                 one finished game: ranking, seed,
                                                  deal, game records
    GET /api/replay/<room>/<gen>                  one finished game step by step
    GET /api/matches/<room>/<gen>                 the match game <gen> is a deal of
    GET /api/analysis/<room>/<gen>                the solver's per-ply verdicts
    GET /api/me/unfinished                        your practice games not finished (token)
    GET /api/me/stats                             your statistics per kind and variant
    GET /api/players/<id>/games?kind=&variant=&result=&opponent=&cursor=&limit=
                                                  a player's finished games, newest first
    GET /api/players/<id>/vs/<other>              two players' record against each other
    GET /api/players/<username|id>/profile        a player's profile (404 nobody, 410 a
                                                  deleted account), your record against it
    GET /api/me/data                              everything held about you (token)
    GET /api/daily                                today's challenges, and your attempts
    GET /api/daily/<date>/<slug>/leaderboard      one leaderboard page, and your rank
    GET /api/daily/archive?limit=30               closed days with their seeds and deals
    GET /api/daily/stats                          your daily statistics (token required)
    GET /api/codes/<code>                         the open race a room code leads to
    GET /api/tournaments...                       `tournament_api.py`

"Your" needs `Authorization: Bearer <token>` (a websocket token); a missing or invalid
token is treated as anonymous. Every answer comes from the service (`service.queries`,
`service.analysis`, `service.tournaments`): this module parses, routes and picks the
status; it reads no store and decides nothing of what a viewer may see (the spoiler gate
and `race.redaction` do, in the service). Shapes: docs/protocol.md, docs/daily.md.
"""

from __future__ import annotations

import re
from datetime import date
from http import HTTPStatus
from typing import Any, Final, Literal
from urllib.parse import unquote

from klondike_live import keys
from klondike_live.auth import USER_ID
from klondike_live.engine import NotationError, Variant
from klondike_live.history import UNRANKED, Cursor, GameFilter
from klondike_live.race import codes
from klondike_live.race.redaction import analysis_for
from klondike_live.race.stats import StatsKind
from klondike_live.service.analysis import Analyses
from klondike_live.service.codes import RoomCodes
from klondike_live.service.queries import Gate, Queries, daily_variant

MAX_LIMIT: Final = 100
MAX_GAMES_PAGE: Final = 100
GAME_KINDS: Final = frozenset({*StatsKind, UNRANKED})
MAX_OFFSET: Final = 10**7
MAX_GEN_DIGITS: Final = 9
MAX_WHO: Final = 128
_DATE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")

Answer = tuple[HTTPStatus, Any]


def _error(status: HTTPStatus, code: str) -> Answer:
    return status, {"error": code}


NOT_FOUND: Final = _error(HTTPStatus.NOT_FOUND, "not_found")
GONE: Final = _error(HTTPStatus.GONE, "gone")
UNAUTHORIZED: Final = _error(HTTPStatus.UNAUTHORIZED, "unauthorized")
BAD_REQUEST: Final = _error(HTTPStatus.BAD_REQUEST, "bad_request")
BAD_CODE: Final = (
    HTTPStatus.BAD_REQUEST,
    {
        "error": "bad_code",
        "message": f"a room code is {codes.LENGTH} letters of {codes.ALPHABET}"
        " (any case; spaces and dashes are ignored)",
    },
)


def game_key(rest: str) -> tuple[str, int] | None:
    """`<room>/<gen>` of a results, replay or analysis path, or None when it names no
    game."""
    room_id, _, gen_text = rest.partition("/")
    if not keys.is_room_id(room_id):
        return None
    if not (gen_text.isascii() and gen_text.isdigit() and len(gen_text) <= MAX_GEN_DIGITS):
        return None
    return room_id, int(gen_text)


def _number(query: dict[str, list[str]], name: str, default: int, high: int) -> int | None:
    """A non-negative integer query parameter (clamped to `high`); None if malformed."""
    values = query.get(name)
    if not values:
        return default
    text = values[-1]
    if not (text.isascii() and text.isdigit() and len(text) <= 12):
        return None
    return min(int(text), high)


def _last(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[-1] if values else None


def _game_filter(query: dict[str, list[str]]) -> GameFilter | None:
    """The filters of a player's games page; None when one is malformed."""
    kind, result = _last(query, "kind"), _last(query, "result")
    variant_text, opponent = _last(query, "variant"), _last(query, "opponent")
    if kind is not None and kind not in GAME_KINDS:
        return None
    if result is not None and result not in ("won", "lost"):
        return None
    if opponent is not None and not USER_ID.fullmatch(opponent):
        return None
    variant = None
    if variant_text is not None:
        try:
            variant = str(Variant.parse(variant_text))
        except NotationError:
            return None
    return GameFilter(kind=kind, variant=variant, result=result, opponent=opponent)


def _cursor(query: dict[str, list[str]]) -> Cursor | Literal[False] | None:
    """The page's cursor, None for the first page, False when malformed."""
    text = _last(query, "cursor")
    if text is None:
        return None
    try:
        return Cursor.parse(text)
    except ValueError:
        return False


def _day(text: str) -> date | None:
    if not _DATE.match(text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


class Api:
    """`/api/...` answers as (status, JSON-ready data), over the service's read side."""

    def __init__(self, queries: Queries, analyses: Analyses, room_codes: RoomCodes) -> None:
        self.queries = queries
        self.analyses = analyses
        self.codes = room_codes

    async def route(self, route: str, query: dict[str, list[str]], user: str | None) -> Answer:
        """`route` is the path after `/api/`; `user` the token's account, if any."""
        queries = self.queries
        if route == "rooms":
            return HTTPStatus.OK, await queries.public_rooms()
        if route == "live":
            return HTTPStatus.OK, await queries.live()
        if route == "results":
            return HTTPStatus.OK, await queries.finished()
        if route in ("me/unfinished", "me/stats", "me/data"):
            if user is None:
                return UNAUTHORIZED
            if route == "me/data":
                return HTTPStatus.OK, await queries.my_data(user)
            if route == "me/stats":
                return HTTPStatus.OK, await queries.stats(user)
            return HTTPStatus.OK, await queries.unfinished(user)
        if route == "daily" or route.startswith("daily/"):
            return await self._daily(route.split("/"), query, user)
        if route.startswith("players/"):
            parts = route.split("/")
            if len(parts) == 3 and parts[2] == "profile":
                return await self._profile(unquote(parts[1]), user)
            return await self._players(parts, query)
        if route.startswith("codes/"):
            return await self._code(route.removeprefix("codes/"))
        kind, _, rest = route.partition("/")
        game = game_key(rest)
        if game is None:
            return NOT_FOUND
        if kind == "analysis":
            return await self._analysis(*game, user)
        if kind == "matches":
            record = await queries.match(*game)
            return NOT_FOUND if record is None else (HTTPStatus.OK, record)
        if kind not in ("results", "replay"):
            return NOT_FOUND
        answer = await queries.game(*game, user, "results" if kind == "results" else "replay")
        return _gated(answer)

    async def _daily(
        self, parts: list[str], query: dict[str, list[str]], user: str | None
    ) -> Answer:
        queries = self.queries
        if parts == ["daily"]:
            return HTTPStatus.OK, await queries.daily_today(user)
        if parts == ["daily", "archive"]:
            limit = _number(query, "limit", 30, MAX_LIMIT)
            if limit is None:
                return BAD_REQUEST
            return HTTPStatus.OK, await queries.daily_archive(max(1, limit))
        if parts == ["daily", "stats"]:
            if user is None:
                return UNAUTHORIZED
            return HTTPStatus.OK, await queries.daily_stats(user)
        if len(parts) == 4 and parts[3] == "leaderboard":
            day, variant = _day(parts[1]), daily_variant(parts[2])
            if day is None or variant is None:
                return NOT_FOUND
            offset = _number(query, "offset", 0, MAX_OFFSET)
            limit = _number(query, "limit", 50, MAX_LIMIT)
            if offset is None or limit is None:
                return BAD_REQUEST
            page = await queries.daily_leaderboard(day, variant, offset, max(1, limit), user)
            return NOT_FOUND if page is None else (HTTPStatus.OK, page)
        return NOT_FOUND

    async def _players(self, parts: list[str], query: dict[str, list[str]]) -> Answer:
        """A player's games (a page and its filters) or its record against another."""
        if len(parts) < 3 or not USER_ID.fullmatch(parts[1]):
            return NOT_FOUND
        user = parts[1]
        if len(parts) == 4 and parts[2] == "vs":
            if not USER_ID.fullmatch(parts[3]):
                return NOT_FOUND
            return HTTPStatus.OK, await self.queries.head_to_head(user, parts[3])
        if len(parts) != 3 or parts[2] != "games":
            return NOT_FOUND
        limit = _number(query, "limit", 20, MAX_GAMES_PAGE)
        only = _game_filter(query)
        cursor = _cursor(query)
        if limit is None or only is None or cursor is False:
            return BAD_REQUEST
        return HTTPStatus.OK, await self.queries.games(user, only, cursor or None, max(1, limit))

    async def _profile(self, who: str, viewer: str | None) -> Answer:
        """A player's profile by username or user id: 404 `not_found`, 410 `gone`."""
        if not who or len(who) > MAX_WHO:
            return NOT_FOUND
        return _gated(await self.queries.profile(who, viewer))

    async def _code(self, typed: str) -> Answer:
        """The open race a room code leads to: 200 `{"room": id, "code": code}`, 400
        `bad_code` for text that is no code, 404 when no open race carries it."""
        code = codes.normalise(unquote(typed))
        if code is None:
            return BAD_CODE
        room_id = await self.codes.resolve(code)
        if room_id is None:
            return NOT_FOUND
        return HTTPStatus.OK, {"room": room_id, "code": code}

    async def _analysis(self, room_id: str, gen: int, user: str | None) -> Answer:
        """A finished game's analysis: 200 when stored, 202 `pending` while it is made
        (asked for here when it is neither), 403 `withheld` where the replay is shown as
        played (a daily game while its day is open)."""
        if not self.analyses.enabled:
            return NOT_FOUND
        found = await self.queries.shown_game(room_id, gen, user)
        if isinstance(found, Gate):
            return _gated(found)
        _, shown = found
        if analysis_for({}, shown) is None:
            return _error(HTTPStatus.FORBIDDEN, "withheld")
        stored, pending = await self.analyses.load(room_id, gen)
        if stored is None:
            if not pending:
                self.analyses.request(room_id, gen)
            return HTTPStatus.ACCEPTED, {"status": "pending"}
        shown_analysis = analysis_for(stored, shown)
        assert shown_analysis is not None
        return HTTPStatus.OK, {"status": "ready", **shown_analysis}


def _gated(answer: dict[str, Any] | Gate) -> Answer:
    """A game's answer, or the status of why there is none."""
    match answer:
        case Gate.NOT_FOUND:
            return NOT_FOUND
        case Gate.SPOILER:
            return _error(HTTPStatus.FORBIDDEN, "spoiler")
        case Gate.GONE:
            return GONE
        case _:
            return HTTPStatus.OK, answer
