"""What the HTTP JSON API answers, read from the store: the read side of the service.

    queries = Queries(store, history, daily)
    await queries.public_rooms()                      # GET /api/rooms
    await queries.live()                              # GET /api/live
    await queries.finished()                          # GET /api/results
    await queries.game(room, gen, user, "replay")     # /api/results|replay/<room>/<gen>
    await queries.unfinished(user), queries.stats(user)
    await queries.games(user, only, cursor, limit)    # GET /api/players/<id>/games
    await queries.head_to_head(user, other)           # GET /api/players/<id>/vs/<id>
    await queries.daily_today(user), daily_leaderboard(...), daily_archive(n), daily_stats(u)
    await queries.profile("Ann", viewer)              # GET /api/players/<name|id>/profile
    await queries.my_data(user)                       # GET /api/me/data

Each answer is JSON-ready data, or a `Gate` saying why there is none (no such game, or
the daily spoiler gate). The gateway routes and encodes; it never reads a store.

A finished game is read from Valkey while it is cached there (its first hour, and until
the history database has it), else from the history database (`history.database`);
lists, statistics and players' games come from the database alone. A database that
fails raises `HistoryError` (the gateway answers 503).

Hidden cards: cards and seeds come only from stored results, which exist only for
finished games; what is shown of one is `race.redaction`'s decision under the spoiler
gate of `DailyService.may_see` (a daily game while its day is open: only to an account
that finished its own ranked attempt). Nothing here reveals a seed or deal of a day that
has not closed: seeds come only from `DayRecord.reveal`, which refuses an open day.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from datetime import date
from enum import Enum
from typing import Any, Final, Literal

import msgpack

from klondike_live.accounts.usernames import username_key
from klondike_live.auth import USER_ID
from klondike_live.daily.days import DayRecord, day_end, day_of, is_closed
from klondike_live.daily.leaderboard import LeaderboardRow
from klondike_live.daily.variants import DAILY_VARIANTS, slug_variant, variant_slug
from klondike_live.engine import Variant
from klondike_live.history import Cursor, GameFilter, History
from klondike_live.history.accounts import AccountRecords
from klondike_live.history.bots import BotRecords
from klondike_live.history.friends import FriendRecords
from klondike_live.history.players import PlayerRecords, is_deleted
from klondike_live.protocol.kinds import RoomKind
from klondike_live.race.match import MAX_DEALS, match_record
from klondike_live.race.redaction import Disclosure, replay_for, results_for
from klondike_live.race.room import COUNTDOWN, FINISHED, RACING
from klondike_live.race.stats import summary, totals
from klondike_live.service.daily import DailyService, to_ms
from klondike_live.store import Store

READY_SECONDS: Final = 0.5
"""How long the history database may take to answer the readiness probe."""

NEIGHBOURS: Final = 5
"""Rows above and below a player's own in a leaderboard's `me`."""

PROFILE_GAMES: Final = 20
"""Games on a profile's first page (the rest through the games page)."""
PROFILE_DAYS: Final = 14
"""Recent daily results on a profile."""
PROFILE_TOURNAMENTS: Final = 20
"""Kept tournaments on a profile."""

GameView = Literal["results", "replay"]


class Gate(Enum):
    """Why a request about one finished game has no answer."""

    NOT_FOUND = "not_found"  # no such game (or its results expired), or player
    GONE = "gone"  # a deleted account
    SPOILER = "spoiler"  # a daily game of an open day, and the asker may not see it


def row_json(row: LeaderboardRow) -> dict[str, Any]:
    """One leaderboard row as the API shows it."""
    entry = row.entry
    return {
        "rank": row.rank,
        "user": entry.user,
        "name": entry.name,
        "won": entry.won,
        "time_ms": entry.time_ms,
        "moves": entry.moves,
        "found": entry.found,
        "finished_at": entry.finished_at,
        "room": entry.room or None,
        "gen": entry.gen or None,
    }


def daily_variant(slug: str) -> Variant | None:
    """The daily variant of a URL slug, or None."""
    try:
        variant = slug_variant(slug)
    except ValueError:
        return None
    return variant if variant in DAILY_VARIANTS else None


class Queries:
    """The read side: every answer of the HTTP JSON API but the tournaments' (those are
    `service.tournaments`') and the analyses' (`service.analysis`)."""

    def __init__(self, store: Store, history: History, daily: DailyService) -> None:
        self.store = store
        self.history = history
        self.daily = daily
        self.accounts = AccountRecords(history)
        self.players = PlayerRecords(history)
        self.bots = BotRecords(history)
        self.friends = FriendRecords(history)

    async def ready(self) -> bool:
        """Whether the store answers a PING within its health bound."""
        return await self.store.reachable()

    async def history_ready(self) -> bool:
        """Whether the history database answers within the same bound."""
        try:
            return await asyncio.wait_for(self.history.ping(), READY_SECONDS)
        except TimeoutError:
            return False

    # ------------------------------------------------------------ games

    async def public_rooms(self) -> list[dict[str, Any]]:
        out = []
        for state in await self.store.list_public():
            host = next((s.name for _, s in state.seated() if s.user == state.host), "")
            out.append(
                {
                    "room": state.id,
                    "variant": str(state.variant),
                    "host": host,
                    "racers": len(state.seated()),
                    "bots": sum(1 for _, seat in state.seated() if seat.bot),
                    "allows_bots": state.bots,
                    "capacity": state.capacity,
                    "time_limit": state.time_limit,
                    "best_of": state.best_of,
                    "created_at": state.created_ms,
                }
            )
        return out

    async def live(self) -> list[dict[str, Any]]:
        """Public races from their countdown to their end and public solo games being
        played: who plays what, since when, and how many watch."""
        out = []
        for state, spectators, listed_start in await self.store.list_live():
            if not state.public_room or state.state not in (COUNTDOWN, RACING):
                # Left over (the game ended before it was listed): tidy the index.
                await self.store.unlist_live(state.id, listed_start)
                continue
            if state.paused and state.clock_started:
                continue  # its player is away: not being played now (listed on return)
            out.append(
                {
                    "room": state.id,
                    "kind": state.kind,
                    "variant": str(state.variant),
                    "state": state.state,
                    "racers": [seat.name for _, seat in state.seated()],
                    "bots": [bool(seat.bot) for _, seat in state.seated()],
                    "started_at": state.start_at_ms,
                    "spectators": spectators,
                }
            )
        return out

    async def finished(self) -> list[dict[str, Any]]:
        """Recently finished public games (none of an open day's daily challenge)."""
        out = []
        for room_id, gen, blob in await self.history.finished():
            results: dict[str, Any] = msgpack.unpackb(blob, raw=False)
            if self.daily.hidden(results):
                continue
            out.append(
                {
                    "room": room_id,
                    "gen": gen,
                    "variant": results["variant"],
                    "ended_at": results["ended_at"],
                    "ranking": [
                        {k: row[k] for k in ("rank", "seat", "name", "status", "time_ms", "found")}
                        | {"bot": bool(row.get("bot", False))}
                        for row in results["ranking"]
                    ],
                }
            )
        return out

    async def game(
        self, room_id: str, gen: int, user: str | None, view: GameView
    ) -> dict[str, Any] | Gate:
        """One finished game's results or replay as `user` may see it."""
        found = await self.shown_game(room_id, gen, user)
        if isinstance(found, Gate):
            return found
        results, shown = found
        if view == "results":
            return results_for(results, shown)
        return await self._replay(room_id, results, shown)

    async def shown_game(
        self, room_id: str, gen: int, user: str | None
    ) -> tuple[dict[str, Any], Disclosure] | Gate:
        """A finished game's stored results and how much of them `user` is shown (the
        spoiler gate, `DailyService.disclosure`), or why there is nothing to show."""
        results = await self._results(room_id, gen)
        if results is None:
            return Gate.NOT_FOUND
        shown = await self.daily.disclosure(results, user)
        return Gate.SPOILER if shown is None else (results, shown)

    async def match(self, room_id: str, gen: int) -> dict[str, Any] | None:
        """The record of the match that game `gen` of the room is a deal of (its
        deals from the first to the last stored, `race.match.match_record`); None when
        that game is not found or no match's deal."""
        results = await self._results(room_id, gen)
        if results is None or "match" not in results:
            return None
        first = int(results["match"]["from"])
        deals = []
        for deal_gen in range(first, first + MAX_DEALS):
            deal = results if deal_gen == gen else await self._results(room_id, deal_gen)
            if deal is None or deal.get("match", {}).get("from") != first:
                if deal_gen < gen:
                    continue  # not in either store any more: the record goes without it
                break
            deals.append(deal)
            if deal["match"]["over"]:
                break
        return match_record(room_id, deals) if deals else None

    async def _results(self, room_id: str, gen: int) -> dict[str, Any] | None:
        data = await self.store.load_results(room_id, gen)
        if data is None:
            data = await self.history.load_results(room_id, gen)
        if data is None:
            return None
        results: dict[str, Any] = msgpack.unpackb(data, raw=False)
        return results

    async def _replay(
        self, room_id: str, results: dict[str, Any], shown: Disclosure
    ) -> dict[str, Any]:
        """The replay of a finished game from its stored `results`, under `shown`."""
        if "kind" in results:
            kind = RoomKind(results["kind"])
        else:  # results stored before they named their kind
            loaded = await self.store.load_room(room_id)
            kind = loaded[0].kind if loaded is not None else RoomKind.RACE
        # A long game of eight boards takes tens of milliseconds to replay: in a thread,
        # the event loop keeps its turns meanwhile.
        return await asyncio.to_thread(replay_for, room_id, kind, results, shown)

    # ------------------------------------------------------------ a player's own

    async def unfinished(self, user: str) -> list[dict[str, Any]]:
        """The player's practice games not finished yet, newest first: what they are,
        how far they got and the time on their clock (no cards)."""
        players = self.store.players
        now = await self.store.now_ms()
        out = []
        for room_id in await players.unfinished(user, now):
            loaded = await self.store.load_room(room_id)
            state = loaded[0] if loaded is not None else None
            seat = state.seat_of(user) if state is not None else None
            if state is None or seat is None or state.state not in (COUNTDOWN, RACING):
                await players.remove_unfinished(user, room_id)  # over, or expired
                continue
            board = await self.store.load_board(room_id, state.gen, seat)
            out.append(
                {
                    "room": room_id,
                    "kind": state.kind,
                    "variant": str(state.variant),
                    "daily": state.daily or None,
                    "moves": board.int("moves") if board is not None else 0,
                    "found": board.int("found") if board is not None else 0,
                    "time_ms": state.clock_ms(now),
                    "paused": state.paused,
                    "created_at": state.created_ms,
                }
            )
        return out

    async def stats(self, user: str) -> dict[str, Any]:
        """The player's statistics per kind and variant, totals and recent games."""
        counters, recent = await self.history.stats(user)
        categories = summary(counters)
        return {
            "user": user,
            "totals": totals(categories),
            "categories": [c.to_json() for c in categories],
            "recent": recent,
        }

    async def games(
        self, user: str, only: GameFilter, cursor: Cursor | None, limit: int
    ) -> dict[str, Any]:
        """One page of a player's finished games, newest first, and `next` to continue
        it: what each was, how it ended and who else played, with no card (an open
        day's daily game shows what its leaderboard shows; its replay stays behind the
        spoiler gate)."""
        page = await self.history.games_of(user, only, cursor=cursor, limit=limit)
        return {
            "user": user,
            "games": page.games,
            "next": None if page.next is None else str(page.next),
        }

    async def head_to_head(self, user: str, other: str) -> dict[str, Any]:
        """Every finished game two players played together, from `user`'s side."""
        return await self.history.head_to_head(user, other)

    # ------------------------------------------------------------ daily challenges

    async def daily_today(self, user: str | None) -> dict[str, Any]:
        """Today's challenges, and `user`'s attempts at them."""
        daily = self.daily
        now = daily.clock()
        day = day_of(now)
        challenges = []
        for variant in DAILY_VARIANTS:
            record = await daily.stored_record(day, variant)
            if record is None:
                daily.prepare_soon(day, variant)
            board = daily.leaderboard(day, variant)
            challenges.append(
                {
                    "date": day.isoformat(),
                    "variant": str(variant),
                    "slug": variant_slug(variant),
                    "commitment": record.commitment if record else None,
                    "par": record.par if record else None,
                    "ready": record is not None,
                    "players": await board.count(),
                    "closes_at": to_ms(day_end(day)),
                    "attempt": None if user is None else await self._attempt(user, day, variant),
                }
            )
        return {"now": to_ms(now), "date": day.isoformat(), "challenges": challenges}

    async def _attempt(self, user: str, day: date, variant: Variant) -> dict[str, Any] | None:
        room = await self.daily.attempt_room(user, day, variant)
        if room is None:
            return None
        board = self.daily.leaderboard(day, variant)
        entry = await board.entry(user)
        finished = entry is not None
        if not finished:
            loaded = await self.store.load_room(room)
            finished = loaded is not None and loaded[0].state == FINISHED
        return {
            "room": room,
            "ranked": True,
            "state": "finished" if finished else "playing",
            "result": None
            if entry is None
            else {
                "won": entry.won,
                "time_ms": entry.time_ms,
                "moves": entry.moves,
                "found": entry.found,
            },
            "rank": None if entry is None else await board.rank_of(user),
        }

    async def daily_leaderboard(
        self, day: date, variant: Variant, offset: int, limit: int, user: str | None
    ) -> dict[str, Any] | None:
        """One page of a day's leaderboard and `user`'s rank with its neighbours; None
        for a day after today."""
        daily = self.daily
        if day > daily.today():
            return None
        board = await daily.standings(day, variant)
        rows = await board.page(offset, limit)
        record = await daily.stored_record(day, variant)
        me = None
        if user is not None:
            around = await board.around(user, NEIGHBOURS)
            if around is not None:
                me = {"rank": around.me.rank, "rows": [row_json(r) for r in around.rows]}
        return {
            "date": day.isoformat(),
            "variant": str(variant),
            "slug": variant_slug(variant),
            "count": await board.count(),
            "closed": is_closed(day, daily.clock()),
            "par": record.par if record else None,
            "rows": [row_json(r) for r in rows],
            "me": me,
        }

    async def daily_archive(self, days: int) -> list[dict[str, Any]]:
        """Closed days, newest first: every daily variant of each, seed and deal shown;
        from the history database, and from Valkey for those not kept there yet."""
        daily = self.daily
        now = daily.clock()
        yesterday = date.fromordinal(day_of(now).toordinal() - 1)
        width = days * len(DAILY_VARIANTS)
        found: dict[tuple[date, Variant], tuple[DayRecord, int, LeaderboardRow | None]] = {}
        for record, players, top in await daily.kept.closed(yesterday, width):
            found[(record.day, record.variant)] = (record, players, top)
        for day_text, slug in await daily.daily_store.indexed_days(yesterday, width):
            try:
                day = date.fromisoformat(day_text)
            except ValueError:
                continue
            variant = daily_variant(slug)
            if variant is None or (day, variant) in found or not is_closed(day, now):
                continue
            stored = await daily.stored_record(day, variant)
            if stored is None:
                continue
            board = daily.leaderboard(day, variant)
            first = await board.page(0, 1)
            found[(day, variant)] = (stored, await board.count(), first[0] if first else None)
        ordered = sorted(
            (key for key in found if key[1] in DAILY_VARIANTS),
            key=lambda key: (-key[0].toordinal(), DAILY_VARIANTS.index(key[1])),
        )
        kept = sorted({day for day, _ in ordered}, reverse=True)[:days]
        out = []
        for day, variant in ordered:
            if day not in kept:
                continue
            record, players, top = found[(day, variant)]
            revealed = record.reveal(now)
            out.append(
                {
                    "date": day.isoformat(),
                    "variant": str(variant),
                    "slug": variant_slug(variant),
                    "commitment": record.commitment,
                    "par": record.par,
                    "seed": revealed["seed"],
                    "deal": revealed["deal"],
                    "players": players,
                    "winner": row_json(top) if top is not None and top.entry.won else None,
                }
            )
        return out

    async def daily_stats(self, user: str) -> dict[str, Any]:
        """The player's daily statistics (streaks, days played and won)."""
        mine = await self.daily.player_stats(user)
        data = dataclasses.asdict(mine)
        data["last_played"] = None if mine.last_played is None else mine.last_played.isoformat()
        return data

    # ------------------------------------------------------------ profiles, your data

    async def profile(self, who: str, viewer: str | None) -> dict[str, Any] | Gate:
        """A player's profile: an account by its username (any case, by its key) or
        its user id, a guest by its user id; its statistics, streaks, recent daily
        results, kept tournaments, first page of games, and its record against
        `viewer` (from the viewer's side); a bot account's says so, and names its owner.
        `Gate.GONE` for a deleted account's marker,
        `Gate.NOT_FOUND` for nobody (a guest with no kept game)."""
        if is_deleted(who):
            return Gate.GONE
        account = await self.accounts.by_username(username_key(who))
        if account is None and USER_ID.fullmatch(who):
            account = await self.accounts.by_user(who)
        if account is not None:
            user, name = account.user_id, account.username
            row = await self.players.account_row(user)
            since = None if row is None else row["created_at"]
        else:
            if not USER_ID.fullmatch(who):
                return Gate.NOT_FOUND
            user = who
            found = await self.players.last_name(user)
            if found is None:
                return Gate.NOT_FOUND
            name, since = found, await self.players.first_seen(user)
        stats = await self.stats(user)
        page = await self.games(user, GameFilter(), None, PROFILE_GAMES)
        entries = await self.daily.kept.entries_of(user)
        daily = [
            {
                "date": day.isoformat(),
                "variant": str(variant),
                "won": entry.won,
                "time_ms": entry.time_ms,
                "moves": entry.moves,
                "found": entry.found,
            }
            for day, variant, entry in reversed(entries[-PROFILE_DAYS:])
        ]
        states = await self.players.tournaments_of(user)
        kind, owner = "guest", None
        if account is not None:
            kind = "account"
            if account.owner is not None:  # a bot account: who runs it
                kind = "bot"
                runner = await self.accounts.by_user(account.owner)
                owner = None if runner is None else runner.username
        return {
            "user": user,
            "name": name,
            "kind": kind,
            "owner": owner,
            "member_since": since,
            "totals": stats["totals"],
            "categories": stats["categories"],
            "daily": {"stats": await self.daily_stats(user), "recent": daily},
            "tournaments": [
                {
                    "id": state.id,
                    "name": state.name,
                    "format": str(state.format),
                    "state": str(state.phase),
                    "entrants": len(state.entrants),
                    "ended_at": state.ended_ms,
                }
                for state in states[:PROFILE_TOURNAMENTS]
            ],
            "games": page["games"],
            "next": page["next"],
            "vs": (
                None
                if viewer is None or viewer == user
                else await self.history.head_to_head(viewer, user)
            ),
        }

    async def my_data(self, user: str) -> dict[str, Any]:
        """Everything the server holds about a player (GET /api/me/data): its account,
        sessions (no secret), passkeys' public metadata, statistics, every kept game as
        it may see it, daily attempts, tournament entries, whom it follows, who follows
        it and whom it blocked, the bot accounts it owns (never a token), and unfinished
        games."""
        now = await self.store.now_ms()
        kept_games = []
        for room_id, gen in await self.players.all_games(user):
            shown = await self.game(room_id, gen, user, "results")
            if not isinstance(shown, Gate):
                kept_games.append({"room": room_id, "gen": gen, "results": shown})
        account = await self.players.account_row(user)
        sessions = [] if account is None else await self.accounts.sessions_of(user, now)
        return {
            "user": user,
            "exported_at": now,
            "account": account,
            "sessions": [row.wire() for row in sessions],
            "passkeys": await self.players.passkeys_of(user),
            "stats": await self.stats(user),
            "daily": {
                "stats": await self.daily_stats(user),
                "attempts": [
                    {"date": day.isoformat(), "variant": str(variant)} | json.loads(entry.to_json())
                    for day, variant, entry in await self.daily.kept.entries_of(user)
                ],
            },
            "tournaments": [
                {
                    "id": state.id,
                    "name": state.name,
                    "state": str(state.phase),
                    "entered_at": entrant.entered_ms,
                }
                for state in await self.players.tournaments_of(user)
                if (entrant := state.entrant(user)) is not None
            ],
            "friends": dataclasses.asdict(await self.friends.lists(user)),
            "bots": [dataclasses.asdict(bot) for bot in await self.bots.of(user)],
            "games": kept_games,
            "unfinished": await self.unfinished(user),
        }
