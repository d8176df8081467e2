"""End to end over HTTP: a player's finished games and head-to-head records from the
history database, and finished games served from it once Valkey no longer holds them;
every answer read by the leak auditor (`auditor.audit_http`, with the test's history
database as the truth where Valkey has none)."""

from __future__ import annotations

from klondike_live import keys
from klondike_live.gateway.server import Node
from klondike_live.store.connect import RedisClient

from auditor import http_audit
from daily_support import get, get_ok
from helpers import WON, close_all, node, started_race
from test_http_api import create_solo
from waits import wait_for

__all__ = ["http_audit", "node"]  # fixtures, imported for pytest


async def test_a_player_s_games_and_head_to_head_over_http(node: Node, redis: RedisClient) -> None:
    """Ann wins a race against Bea, then resigns a solo game: her games page lists both,
    newest first, with their results and who else played; it pages by cursor and
    filters by kind and opponent; her record against Bea is one win; malformed filters
    and cursors answer 400, a malformed player 404. Once the race's results leave
    Valkey, its results and replay are served the same from the database."""
    room, (ann, bea), _ = await started_race(node, "Ann", "Bea")
    try:
        for token in WON.moves:
            if ann.own_board(room, 0).status != "playing":
                break  # a race finishes a board won in all but name at once
            await ann.move(room, token)
        await bea.resign(room)
        await ann.expect(lambda m: m["t"] == "results" and m["room"] == room)
        solo = await create_solo(ann, public=False)
        await ann.resign(solo)
        await ann.expect(lambda m: m["t"] == "results" and m["room"] == solo)
        history = node.service.history
        await wait_for(lambda: history.has_game(solo, 1))
        me = f"api/players/{ann.user}"

        games = (await get_ok(node, f"{me}/games"))["games"]
        assert [(g["room"], g["kind"], g["result"]) for g in games] == [
            (solo, "solo", "lost"),
            (room, "race", "won"),
        ]
        race = games[1]
        assert (race["rank"], race["players"], race["found"]) == (1, 2, 52)
        assert [(o["user"], o["name"], o["rank"]) for o in race["opponents"]] == [
            (bea.user, "Bea", 2)
        ]
        first = await get_ok(node, f"{me}/games?limit=1")
        assert [g["room"] for g in first["games"]] == [solo] and first["next"]
        second = await get_ok(node, f"{me}/games?limit=1&cursor={first['next']}")
        assert [g["room"] for g in second["games"]] == [room] and second["next"] is None
        only_races = await get_ok(node, f"{me}/games?kind=race&result=won")
        assert [g["room"] for g in only_races["games"]] == [room]
        against = await get_ok(node, f"{me}/games?opponent={bea.user}&variant=draw%3D1")
        assert [g["room"] for g in against["games"]] == [room]
        record = await get_ok(node, f"{me}/vs/{bea.user}")
        assert (record["games"], record["wins"], record["losses"], record["draws"]) == (1, 1, 0, 0)
        theirs = await get_ok(node, f"api/players/{bea.user}/vs/{ann.user}")
        assert (theirs["wins"], theirs["losses"]) == (0, 1)
        for bad in ("games?kind=chess", "games?result=draw", "games?cursor=x", "games?limit=z"):
            assert await get(node, f"{me}/{bad}") == (400, {"error": "bad_request"})
        for missing in ("api/players/a%20b/games", f"{me}/friends", f"{me}/vs"):
            assert (await get(node, missing))[0] == 404

        paths = (f"api/results/{room}/1", f"api/replay/{room}/1")
        before = [await get_ok(node, path) for path in paths]
        await redis.delete(keys.results(room, 1))  # its cache expiry, come early
        assert [await get_ok(node, path) for path in paths] == before
    finally:
        await close_all([ann, bea])
