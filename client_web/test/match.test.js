// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import "./english.js";
import { matchStatus } from "../src/match.js";

/** @import { MatchSummary } from "../src/wire.js" */

const players = [
  { seat: 0, name: "Ann" },
  { seat: 1, name: "Bea" },
];

/**
 * @param {Partial<MatchSummary>} fields
 * @returns {MatchSummary}
 */
function match(fields) {
  return {
    best_of: 3,
    from: 1,
    deals: [],
    score: [0, 0],
    over: false,
    winner: null,
    forfeit: null,
    ...fields,
  };
}

test("a match under way names the deal being played, or the wait for the next", () => {
  assert.equal(matchStatus(match({ deals: [0] }), players, { state: "racing", now: 0 }), "Deal 2");
  const between = match({ deals: [0], next_at: 10_000 });
  assert.equal(matchStatus(between, players, { state: "finished", now: 6_500 }), "Next deal in 4 seconds");
  assert.equal(matchStatus(between, players, { state: "finished", now: 9_500 }), "Next deal in 1 second");
});

test("a match over names its winner, a draw, or who left it", () => {
  const over = { over: true, deals: [0, null, 0], score: [2, 0] };
  assert.equal(
    matchStatus(match({ ...over, winner: 0 }), players, { state: "finished", now: 0 }),
    "Ann wins the match",
  );
  assert.equal(
    matchStatus(match({ ...over, winner: null }), players, { state: "finished", now: 0 }),
    "The match is drawn",
  );
  const left = match({ ...over, winner: 1, forfeit: 0 });
  assert.equal(matchStatus(left, players, { state: "racing", now: 0 }), "Ann left the match: Bea wins it");
});
