// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import "./english.js";

import { describeRun, lostStep, plyAt, recordMoves, verdictRuns } from "../src/analysis.js";
import { compareLine } from "../src/pages/replay-daily.js";

/** @import { AnalysisBoard, Verdict } from "../src/wire.js" */

/**
 * A board's analysis from a string of verdict letters (w, l, u).
 * @param {string} letters
 * @param {number | null} lostAt
 * @returns {AnalysisBoard}
 */
function analysed(letters, lostAt) {
  /** @type {Record<string, Verdict>} */
  const names = { w: "winnable", l: "lost", u: "unknown" };
  return {
    seat: 0,
    name: "Alice",
    lost_at: lostAt,
    plies: [...letters].map((c, ply) => ({
      ply,
      verdict: names[c],
      line: c === "w" ? ["3F", "D"] : null,
    })),
  };
}

test("runs of verdicts cover every replay step, offset by the moves before the start", () => {
  const board = analysed("wwwlll", 3);
  assert.deepEqual(verdictRuns(board, 0, 5), [
    { verdict: "winnable", first: 0, last: 2 },
    { verdict: "lost", first: 3, last: 5 },
  ]);
  assert.deepEqual(verdictRuns(board, 2, 3), [
    { verdict: "winnable", first: 0, last: 0 },
    { verdict: "lost", first: 1, last: 3 },
  ]);
  assert.equal(describeRun({ verdict: "lost", first: 3, last: 5 }), "moves 3–5: no win was possible");
  assert.equal(describeRun({ verdict: "unknown", first: 4, last: 4 }), "move 4: not decided by the solver");
});

test("the losing move is a replay step, or null before the start or without one", () => {
  assert.equal(lostStep(analysed("wwwlll", 3), 0), 3);
  assert.equal(lostStep(analysed("wwwlll", 3), 2), 1);
  assert.equal(lostStep(analysed("wwwlll", 3), 3), null);
  assert.equal(lostStep(analysed("wwuull", null), 0), null);
});

test("the verdict at a step carries its line when winnable", () => {
  const board = analysed("wul", null);
  assert.deepEqual(plyAt(board, 0, 0), { verdict: "winnable", line: ["3F", "D"] });
  assert.deepEqual(plyAt(board, 1, 1), { verdict: "lost", line: null });
  assert.equal(plyAt(board, 0, 9), null);
});

test("a record's moves are read from its moves line and the lines continuing it", () => {
  const text = [
    "klondike-game 1",
    "variant: draw=1 passes=1 f2t=no",
    "seed: 31",
    "moves: 36 3F D",
    "  D W1",
    "result: resigned",
    "",
  ].join("\n");
  assert.deepEqual(recordMoves(text), ["36", "3F", "D", "D", "W1"]);
  assert.deepEqual(recordMoves("klondike-game 1\nvariant: draw=1\nseed: 1\nmoves:\n"), []);
});

test("a daily board is compared with par and with the leader's time", () => {
  const leader = { rank: 1, user: "u1", name: "Ann", won: true, time_ms: 100_000, moves: 90, found: 52 };
  assert.equal(
    compareLine({ name: "Bob", moves: 98, won: true, time_ms: 116_300 }, 90, leader),
    "Bob: 98 moves (par 90, +8) · time 1:56.3 (+0:16.3 on the leader, Ann)",
  );
  assert.equal(
    compareLine({ name: "Ann", moves: 88, won: true, time_ms: 100_000 }, 90, leader),
    "Ann: 88 moves (par 90, −2) · time 1:40.0 (the leader's time, Ann)",
  );
  assert.equal(
    compareLine({ name: "Cy", moves: 40, won: false, time_ms: null }, null, leader),
    "Cy: 40 moves · not won",
  );
});
