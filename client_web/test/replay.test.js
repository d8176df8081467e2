// @ts-check
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { START, eventTimes, movesAt, nextTime, prepareBoard, previousTime } from "../src/replay.js";

/** @import { Diff, View } from "../src/view.js" */

/** @type {{seed: string, variant: string, start: View, steps: {m: string, d: Diff, view: View}[]}[]} */
const games = JSON.parse(readFileSync(new URL("./fixtures/games.json", import.meta.url), "utf8"));

/**
 * A golden game as a replay's board, its moves `spacing` ms apart.
 * @param {(typeof games)[number]} game
 * @param {number} spacing
 */
function replayBoard(game, spacing) {
  return {
    seat: 0,
    start: game.start,
    steps: game.steps.map((step, k) => ({ m: step.m, d: step.d, t: (k + 1) * spacing })),
  };
}

test("a prepared replay holds every view of the game", () => {
  const game = games[0];
  const board = prepareBoard(replayBoard(game, 100));
  assert.equal(board.views.length, game.steps.length + 1);
  game.steps.forEach((step, k) => assert.deepEqual(board.views[k + 1], step.view));
});

test("the shared clock puts each board at its last move made by then", () => {
  const a = prepareBoard(replayBoard(games[0], 100));
  const b = prepareBoard(replayBoard(games[1], 250));
  assert.equal(movesAt(a, 0), 0);
  assert.equal(movesAt(a, 99), 0);
  assert.equal(movesAt(a, 100), 1);
  assert.equal(movesAt(b, 1000), 4);
  assert.equal(movesAt(a, 1e9), a.views.length - 1);
  const stops = eventTimes([a, b]);
  assert.deepEqual(stops.slice(0, 4), [START, 100, 200, 250]);
  assert.equal(nextTime(stops, 200), 250);
  assert.equal(previousTime(stops, 250), 200);
  assert.equal(previousTime(stops, 100), START);
  const last = stops[stops.length - 1];
  assert.equal(nextTime(stops, last), last);
});

test("a move made at 0 ms comes after the start, not with it", () => {
  const board = prepareBoard(replayBoard(games[0], 0));
  assert.equal(board.times[1], 0);
  assert.equal(movesAt(board, START), 0);
  assert.ok(movesAt(board, 0) >= 1);
  const stops = eventTimes([board]);
  assert.equal(stops[0], START);
  assert.equal(nextTime(stops, START), 0);
  assert.equal(previousTime(stops, 0), START);
});
