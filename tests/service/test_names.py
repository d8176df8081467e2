"""A player's new name through the live service: at once on the connection, on its seat
in every room it is in (every viewer's next room frame, on any node), in results written
after it, and on its entries in the tournaments it watches."""

from __future__ import annotations

from typing import Any

from klondike_live.daily.variants import DRAW1
from klondike_live.protocol import incoming as msg
from klondike_live.protocol.kinds import Role, RoomKind, TournamentFormat
from klondike_live.race.room import FINISHED, RACING

from race_support import play, start_race
from service_fixtures import Cluster, MemoryConnection


def seat_names(conn: MemoryConnection, room: str) -> list[str | None]:
    """The names of the seats in the last `room` frame of `room` the connection got."""
    frames = [m for m in conn.of_kind("room") if m["room"] == room]
    assert frames, f"{conn!r} got no room frame of {room}"
    return [None if s is None else s["name"] for s in frames[-1]["seats"]]


def renamed(conn: MemoryConnection) -> dict[str, Any]:
    (answer,) = conn.of_kind("renamed")
    return answer


async def test_a_rename_in_the_lobby_reaches_every_viewer_on_every_node(pair: Cluster) -> None:
    """A racer renamed in the lobby: the host, itself and a spectator on the other node
    see the new name in their next room frame; `renamed` answers with the canonical
    name and the rid; a later room it creates has it too."""
    ann, bob = pair.connect("ann"), pair.connect("bob", 1)
    sue = pair.connect("sue", 1)
    room = await pair.create_race(ann, 3)
    for conn in (ann, bob):
        assert await pair.request(conn, msg.Join(room, Role.RACER)) is None
    assert await pair.request(sue, msg.Join(room, Role.SPECTATOR)) is None
    assert seat_names(sue, room) == ["Ann", "Bob", None]

    assert await pair.request(bob, msg.Rename("Bobby Tables", rid=9)) is None
    assert renamed(bob) == {"t": "renamed", "name": "Bobby Tables", "rid": 9}
    assert bob.name == "Bobby Tables"
    for conn in (ann, bob, sue):
        assert seat_names(conn, room) == ["Ann", "Bobby Tables", None], conn
    stored = (await pair.race(room)).state.seats[1]
    assert stored is not None and stored.name == "Bobby Tables"

    # The connection's own later requests use it: a room it creates seats it so named.
    other = await pair.create_race(bob, 2)
    assert await pair.request(bob, msg.Join(other, Role.RACER)) is None
    assert seat_names(bob, other) == ["Bobby Tables", None]


async def test_a_rename_mid_race_shows_in_the_room_and_the_results(cluster: Cluster) -> None:
    """Renamed while racing (and as a spectator of another room, where it has no seat,
    nothing changes): every viewer's next room frame shows it and the results written at
    the race's end carry it; a rename after the end changes the room, not those results."""
    race = await start_race(cluster)
    ann, bob = race.racers
    (sue,) = race.spectators
    elsewhere = await cluster.create_race(sue, 2)  # ann watches a room without her seat
    assert await cluster.request(ann, msg.Join(elsewhere, Role.SPECTATOR)) is None
    await play(cluster, ann, race.room)

    assert await cluster.request(ann, msg.Rename("Hana")) is None
    assert renamed(ann) == {"t": "renamed", "name": "Hana"}
    for conn in (ann, bob, sue):
        assert seat_names(conn, race.room) == ["Hana", "Bob"], conn
    assert seat_names(ann, elsewhere) == ["Sue", None]
    assert (await cluster.race(race.room)).state.state == RACING

    for conn in (ann, bob):
        assert await cluster.request(conn, msg.Resign(race.room)) is None
    assert (await cluster.race(race.room)).state.state == FINISHED
    for conn in (ann, bob, sue):
        (results,) = conn.of_kind("results")
        names = {row["user"]: row["name"] for row in results["ranking"]}
        assert names == {"ann": "Hana", "bob": "Bob"}, conn

    # Finished, before a rematch: the room shows the newer name; the results stay.
    assert await cluster.request(bob, msg.Rename("Robert")) is None
    for conn in (ann, bob, sue):
        assert seat_names(conn, race.room) == ["Hana", "Robert"], conn
        assert len(conn.of_kind("results")) == 1
    assert await cluster.request(bob, msg.Rematch(race.room)) is None
    assert seat_names(sue, race.room) == ["Hana", "Robert"]


async def test_a_rename_changes_the_entry_in_a_watched_tournament(cluster: Cluster) -> None:
    """An entrant watching its tournament renames: every watcher's next tournament frame
    shows the new name (the organizer's too, when the organizer renames)."""
    org, ann = cluster.connect("org"), cluster.connect("ann")
    now = cluster.nodes[0].service.now_ms()
    request = msg.TournamentCreate(
        rid=7,
        name="Names",
        format=TournamentFormat.HEATS,
        variants=(DRAW1,),
        public=True,
        cap=10,
        closes_at=now + 30_000,
        start_at=now + 60_000,
        heats=1,
        pause=10,
        time_limit=600,
    )
    assert await cluster.request(org, request) is None
    tid = org.of_kind("tournament_created")[-1]["tournament"]
    assert await cluster.request(ann, msg.TournamentEnter(tid)) is None
    for conn in (org, ann):
        assert await cluster.request(conn, msg.TournamentWatch(tid)) is None

    assert await cluster.request(ann, msg.Rename("Annie")) is None
    assert await cluster.request(org, msg.Rename("Olga")) is None
    for conn in (org, ann):
        shown = conn.of_kind("tournament")[-1]["tournament"]
        assert [e["name"] for e in shown["entrants"]] == ["Annie"], conn
        assert shown["organizer"]["name"] == "Olga"


async def test_a_game_created_after_a_rename_seats_the_new_name(cluster: Cluster) -> None:
    """A solo game created after a rename seats its creator under the new name."""
    ann = cluster.connect("ann")
    assert await cluster.request(ann, msg.Rename("Ana")) is None
    create = msg.Create(
        rid=2, kind=RoomKind.SOLO, variant=DRAW1, seats=1, time_limit=0, public=False
    )
    assert await cluster.request(ann, create) is None
    room = ann.of_kind("created")[-1]["room"]
    assert await cluster.request(ann, msg.Join(room, Role.RACER)) is None
    assert seat_names(ann, room) == ["Ana"]
