// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import "./english.js";
import { t } from "../src/i18n.js";
import {
  createRequest,
  heatToJoin,
  liveHeat,
  localInput,
  localMs,
  pointsText,
  rankText,
  replayHash,
  resultText,
  sharedRanks,
} from "../src/tournament-data.js";

/** @import { Tournament } from "../src/wire.js" */

test("points show their half when shared; shared ranks are marked", () => {
  assert.equal(pointsText(5), "5");
  assert.equal(pointsText(4.5), "4.5");
  assert.equal(pointsText(3.25), "3.25");
  const shared = sharedRanks([{ rank: 1 }, { rank: 1 }, { rank: 3 }]);
  assert.deepEqual([...shared], [1]);
  assert.equal(rankText(1, shared), "=1");
  assert.equal(rankText(3, shared), "3");
});

test("a result in words and its replay address", () => {
  const row = {
    user: "u",
    name: "Ann",
    place: 1,
    points: 2,
    won: true,
    time_ms: 130_400,
    found: 52,
    moves: 90,
  };
  assert.equal(resultText(row), "won in 2:10.4");
  assert.equal(resultText({ ...row, won: false, found: 12 }), "12 cards home");
  assert.equal(replayHash({ ...row, game: "room_ABCDEFGH/3" }), "#/replay/room_ABCDEFGH/3");
  assert.equal(replayHash(row), null);
});

test("the heat under way is the one whose room is open", () => {
  const round = (/** @type {number} */ n, /** @type {string} */ state, room = "") => ({
    round: n,
    label: `Heat ${n}`,
    state,
    commitment: "c",
    results: [],
    ...(room ? { room, gen: 1 } : {}),
  });
  /** @type {Tournament} */
  const t = /** @type {Tournament} */ (
    /** @type {unknown} */ ({
      format: "heats",
      rounds: [round(1, "finished", "r1xxxxxx"), round(2, "lobby", "r2xxxxxx"), round(3, "scheduled")],
    })
  );
  assert.equal(liveHeat(t)?.round, 2);
  assert.equal(liveHeat({ ...t, rounds: [round(1, "finished", "r1xxxxxx")] }), null);
});

test("the create form becomes a tournament_create request, or says what is missing", () => {
  const fields = {
    name: "  Club night ",
    format: /** @type {"heats"} */ ("heats"),
    listed: true,
    cap: 20,
    closes: "2030-05-01T19:00",
    from: "",
    to: "",
    dailyVariants: [],
    variant: "draw=1",
    start: "2030-05-01T19:30",
    heats: 3,
    pause: 60,
    timeLimit: 600,
  };
  const made = createRequest(fields);
  assert.ok("request" in made);
  assert.deepEqual(made.request, {
    t: "tournament_create",
    name: "Club night",
    format: "heats",
    variants: ["draw=1"],
    public: true,
    cap: 20,
    closes_at: localMs("2030-05-01T19:00"),
    start_at: localMs("2030-05-01T19:30"),
    heats: 3,
    pause: 60,
    time_limit: 600,
  });
  const early = createRequest({ ...fields, start: "2030-05-01T18:00" });
  assert.ok("error" in early);
  assert.equal(t(early.error), "The first heat starts once registration has closed.");
  const series = createRequest({
    ...fields,
    format: "series",
    from: "2030-05-01",
    to: "2030-05-07",
    dailyVariants: ["draw=1", "draw=3"],
  });
  assert.ok("request" in series);
  assert.deepEqual(series.request.variants, ["draw=1", "draw=3"]);
  assert.equal(series.request.start_at, undefined);
  assert.equal(series.request.from, "2030-05-01");
  const unnamed = createRequest({ ...fields, name: " " });
  assert.ok("error" in unnamed);
  assert.equal(t(unnamed.error), "Give the tournament a name.");
  assert.equal(localInput(localMs("2030-05-01T19:05")), "2030-05-01T19:05");
});

test("an entrant is taken to its heat when it starts, or while its countdown runs", () => {
  /** @param {string} state @param {number} [start] */
  const at = (state, start) =>
    /** @type {Tournament} */ (
      /** @type {unknown} */ ({
        format: "heats",
        entrants: [{ user: "ann", name: "Ann" }],
        rounds: [
          {
            round: 1,
            label: "Heat 1",
            state,
            commitment: "c",
            results: [],
            room: "heat1xxxx",
            gen: 1,
            ...(start ? { start_at: start } : {}),
          },
        ],
      })
    );
  const lobby = at("lobby", 5_000);
  const started = at("racing", 5_000);
  assert.equal(heatToJoin(lobby, started, "ann", 60_000), "heat1xxxx"); // seen waiting, now started
  assert.equal(heatToJoin(null, started, "ann", 4_000), "heat1xxxx"); // the countdown runs
  assert.equal(heatToJoin(null, started, "ann", 6_000), null); // well under way: stays
  assert.equal(heatToJoin(started, started, "ann", 60_000), null);
  assert.equal(heatToJoin(lobby, started, "bob", 4_000), null); // not an entrant
  assert.equal(heatToJoin(null, lobby, "ann", 4_000), null); // not started yet
});
