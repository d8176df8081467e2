// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import "./english.js";

import { kindWord, outcomeText, percent, summaryText } from "../src/pages/stats.js";

/** @import { RecentGame } from "../src/wire.js" */

/** @type {RecentGame} */
const game = {
  room: "room-0001",
  gen: 1,
  kind: "race",
  variant: "draw=1 passes=1 f2t=no",
  status: "won",
  won: false,
  rank: 2,
  players: 3,
  time_ms: null,
  moves: 120,
  found: 52,
  ended_at: 0,
};

test("the home page's line says games played, won and the win rate", () => {
  assert.equal(summaryText({ played: 0, won: 0, win_rate: 0 }), "No games finished yet.");
  assert.equal(summaryText({ played: 1, won: 1, win_rate: 1 }), "1 game played · 1 won (100%)");
  assert.equal(summaryText({ played: 7, won: 2, win_rate: 0.2857 }), "7 games played · 2 won (29%)");
  assert.equal(percent(0.5), "50%");
});

test("a recent game says how it ended for you", () => {
  assert.equal(outcomeText({ ...game, won: true, rank: 1, time_ms: 95_000 }), "won in 1:35");
  assert.equal(outcomeText(game), "placed 2 of 3");
  assert.match(outcomeText({ ...game, kind: "solo", players: 1, status: "resigned" }), /resign|gave up/i);
  assert.equal(kindWord("race_machine"), "Race vs machine");
});
