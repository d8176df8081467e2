// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import "./english.js";

import {
  PAGE_SIZE,
  addOpponents,
  ago,
  agoParts,
  gamesPath,
  opponentsText,
  pageHash,
  readQuery,
  resultParts,
} from "../src/pages/games.js";
import { counts, recordText, rivals } from "../src/pages/head-to-head.js";

/** @import { GameLine, HeadToHead, RankingRow } from "../src/wire.js" */

/** @type {GameLine} */
const race = {
  room: "room-0001",
  gen: 2,
  kind: "race",
  variant: "draw=1 passes=1 f2t=no",
  status: "resigned",
  won: false,
  result: "lost",
  rank: 2,
  players: 3,
  time_ms: null,
  moves: 40,
  found: 3,
  ended_at: 1_000_000,
  opponents: [
    { user: "u-ann", name: "Ann", rank: 1, bot: false },
    { user: "u-bot", name: "Steady bot", rank: 3, bot: true },
  ],
};

const DAY = 86_400_000;

test("the address gives the filters and the page size, dropping what the page does not offer", () => {
  const plain = readQuery(new URLSearchParams(""));
  assert.deepEqual(plain, { filters: { kind: "", variant: "", result: "", opponent: "" }, limit: PAGE_SIZE });
  const asked = readQuery(
    new URLSearchParams(
      "kind=race&variant=draw%3D3+passes%3Dunlimited+f2t%3Dno&result=won&opponent=u-ann&limit=5",
    ),
  );
  assert.deepEqual(asked, {
    filters: { kind: "race", variant: "draw=3 passes=unlimited f2t=no", result: "won", opponent: "u-ann" },
    limit: 5,
  });
  const bad = readQuery(new URLSearchParams("kind=chess&variant=x&result=draw&opponent=a/b&limit=500"));
  assert.deepEqual(bad, { filters: { kind: "", variant: "", result: "", opponent: "" }, limit: PAGE_SIZE });
  assert.equal(
    pageHash(asked.filters, 5),
    `#/me/games?${new URLSearchParams("kind=race&variant=draw=3 passes=unlimited f2t=no&result=won&opponent=u-ann&limit=5")}`,
  );
  assert.equal(pageHash(plain.filters, PAGE_SIZE), "#/me/games");
  assert.deepEqual(readQuery(new URLSearchParams(pageHash(asked.filters, 5).split("?")[1])), asked);
});

test("the API path carries the filters chosen, the cursor and the page size", () => {
  const filters = { kind: "solo", variant: "", result: "lost", opponent: "" };
  assert.equal(
    gamesPath("u-me", filters, 20, null),
    "/api/players/u-me/games?kind=solo&result=lost&limit=20",
  );
  assert.equal(
    gamesPath("u-me", filters, 2, "1700.1.room-1"),
    "/api/players/u-me/games?kind=solo&result=lost&cursor=1700.1.room-1&limit=2",
  );
});

test("when a game ended, in the largest whole unit", () => {
  const now = 100 * 365 * DAY;
  assert.deepEqual(agoParts(now - 10_000, now), [0, "second"]);
  assert.deepEqual(agoParts(now - 5 * 60_000, now), [-5, "minute"]);
  assert.deepEqual(agoParts(now - 3 * 3_600_000, now), [-3, "hour"]);
  assert.deepEqual(agoParts(now - 2 * DAY, now), [-2, "day"]);
  assert.deepEqual(agoParts(now - 15 * DAY, now), [-2, "week"]);
  assert.deepEqual(agoParts(now - 70 * DAY, now), [-2, "month"]);
  assert.deepEqual(agoParts(now - 800 * DAY, now), [-2, "year"]);
  assert.equal(ago(now - 2 * DAY, now), "2 days ago");
  assert.equal(ago(now - DAY, now), "yesterday");
  assert.equal(ago(now, now), "now");
});

test("a game's result: won or lost, then the place among several or how it stopped", () => {
  assert.deepEqual(resultParts(race), { won: false, detail: "2nd of 3" });
  assert.deepEqual(resultParts({ ...race, won: true, rank: 1 }), { won: true, detail: "1st of 3" });
  assert.deepEqual(resultParts({ ...race, players: 1, opponents: [] }), { won: false, detail: "resigned" });
  assert.deepEqual(resultParts({ ...race, players: 1, won: true, status: "won" }), { won: true, detail: "" });
  assert.equal(opponentsText(race.opponents), "Ann and Steady bot (bot · steady)");
  assert.equal(opponentsText([]), "–");
});

test("the opponent filter offers every opponent seen, people first", () => {
  const known = new Map();
  const first = addOpponents(known, [race]);
  assert.deepEqual(
    first.map((o) => o.user),
    ["u-ann", "u-bot"],
  );
  const more = addOpponents(known, [
    { ...race, opponents: [{ user: "u-al", name: "Al", rank: 1, bot: false }] },
  ]);
  assert.deepEqual(
    more.map((o) => o.user),
    ["u-al", "u-ann", "u-bot"],
  );
});

/** @type {HeadToHead} */
const record = {
  user: "u-me",
  opponent: "u-ann",
  games: 5,
  wins: 3,
  losses: 1,
  draws: 1,
  last_played: 5_000,
};

test("head to head: against people who raced, said as a score once you have played before", () => {
  /** @param {string} user @param {boolean} [bot] */
  const row = (user, bot = false) => /** @type {RankingRow} */ ({ user, name: user, bot, seat: 0, rank: 1 });
  const ranking = [row("u-me"), row("u-ann"), row("u-bot", true)];
  assert.deepEqual(
    rivals(ranking, "u-me").map((r) => r.user),
    ["u-ann"],
  );
  assert.deepEqual(rivals(ranking, "u-spectator"), []);
  assert.deepEqual(rivals(ranking, null), []);
  assert.equal(counts(record, 5_000), true);
  assert.equal(counts(record, 6_000), false); // this race not written yet
  assert.equal(counts({ ...record, games: 0, last_played: null }, 5_000), false);
  assert.deepEqual(recordText(record, "Ann", 5_000, 6_000), {
    score: "You 3 – 1 Ann",
    details: ["5 games together", "1 draw"],
  });
  assert.deepEqual(recordText({ ...record, last_played: 5_000 + 2 * DAY }, "Ann", 5_000, 5_000 + 4 * DAY), {
    score: "You 3 – 1 Ann",
    details: ["5 games together", "1 draw", "last played 2 days ago"],
  });
  assert.deepEqual(recordText({ ...record, games: 1, wins: 1, losses: 0, draws: 0 }, "Ann", 5_000, 6_000), {
    score: "Your first game against Ann",
    details: [],
  });
});
