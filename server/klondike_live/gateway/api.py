"""The HTTP JSON API's answers, read from the store (routing and responses: `http.py`).

    GET /api/rooms                 public races waiting in their lobby
    GET /api/live                  public games being played now (no cards, no seeds)
    GET /api/results               recently finished public games
    GET /api/results/<room>/<gen>  one finished game: ranking, seed, deal, game records
    GET /api/replay/<room>/<gen>   one finished game step by step, every card shown
    GET /api/me/unfinished         your practice games not finished, to resume (token)
    GET /api/me/stats              your statistics per kind and variant (token)

(the daily challenges' spoiler gate of the last two is applied by `http.py`, and what
is shown of them, a daily game's while its day is open included, by `race.redaction`)

Each method returns JSON-ready data, or None when there is nothing to show (404).
Cards and seeds come only from stored results, which exist only for finished games:
a game that can still be played reveals nothing here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import msgpack

from klondike_live import keys
from klondike_live.race.redaction import Disclosure, replay_for
from klondike_live.race.room import COUNTDOWN, LOBBY, RACING
from klondike_live.race.stats import summary, totals
from klondike_live.store import Store

MAX_GEN_DIGITS = 9


def game_key(rest: str) -> tuple[str, int] | None:
    """`<room>/<gen>` of a results or replay path, or None when it names no game."""
    room_id, _, gen_text = rest.partition("/")
    if not keys.is_room_id(room_id):
        return None
    if not (gen_text.isascii() and gen_text.isdigit() and len(gen_text) <= MAX_GEN_DIGITS):
        return None
    return room_id, int(gen_text)


class Api:
    """The JSON API over one store; `hidden(results)` keeps finished games off the
    public list (daily games while their day is open)."""

    def __init__(
        self, store: Store, *, hidden: Callable[[dict[str, Any]], bool] | None = None
    ) -> None:
        self.store = store
        self.hidden = hidden

    async def public_rooms(self) -> list[dict[str, Any]]:
        out = []
        for room_id in await self.store.list_public():
            loaded = await self.store.load_room(room_id)
            if loaded is None:
                continue
            state = loaded[0]
            if state.state != LOBBY:
                continue
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
        out = []
        for room_id, gen in await self.store.list_finished():
            results = await self.results(room_id, gen)
            if results is None or (self.hidden is not None and self.hidden(results)):
                continue
            if results.get("public") is not True:
                continue  # unlisted (or finished before results said): by link only
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
        counters, recent = await self.store.players.load_stats(user)
        categories = summary(counters)
        return {
            "user": user,
            "totals": totals(categories),
            "categories": [c.to_json() for c in categories],
            "recent": recent,
        }

    async def results(self, room_id: str, gen: int) -> dict[str, Any] | None:
        data = await self.store.load_results(room_id, gen)
        if data is None:
            return None
        results: dict[str, Any] = msgpack.unpackb(data, raw=False)
        return results

    async def replay(
        self, room_id: str, results: dict[str, Any], shown: Disclosure
    ) -> dict[str, Any]:
        """The replay of a finished game from its stored `results`, under `shown`."""
        kind = results.get("kind")
        if kind is None:  # results stored before they named their kind
            loaded = await self.store.load_room(room_id)
            kind = loaded[0].kind if loaded is not None else "race"
        # A long game of eight boards takes tens of milliseconds to replay: in a thread,
        # the event loop keeps its turns meanwhile.
        return await asyncio.to_thread(replay_for, room_id, kind, results, shown)
