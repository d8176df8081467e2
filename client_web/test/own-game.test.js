// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import { cardOf } from "../src/cards.js";
import { hintMarks, hintMoveText, hintText } from "../src/pages/own-game.js";

/** @import { View } from "../src/view.js" */
/** @import { HintFrame } from "../src/wire.js" */

/** @type {View} */
const view = {
  tableau: [
    [0, [cardOf(2, 12)]],
    [1, [-1, cardOf(0, 13)]],
    [0, [cardOf(3, 1)]],
    [0, []],
    [0, []],
    [0, []],
    [0, []],
  ],
  waste: [cardOf(1, 1)],
  stock: 5,
  foundations: [0, 0, 0, 0],
  foundations_hidden: 0,
  pass: 1,
};

test("a hinted move marks the card that moves and where it goes", () => {
  assert.deepEqual(hintMarks(view, "12"), { source: "t0", key: `c${cardOf(2, 12)}`, target: "t1" });
  assert.deepEqual(hintMarks(view, "3F"), { source: "t2", key: `c${cardOf(3, 1)}`, target: "f3" });
  assert.deepEqual(hintMarks(view, "WF"), { source: "waste", key: `c${cardOf(1, 1)}`, target: "f1" });
});

test("a hinted turn of the stock marks its top card, or the empty stock to recycle", () => {
  assert.deepEqual(hintMarks(view, "D"), { source: "stock", key: "s2", target: null });
  assert.deepEqual(hintMarks({ ...view, stock: 0 }, "R"), { source: "stock", key: "s0", target: "stock" });
  assert.equal(hintMarks(view, "nonsense"), null);
});

/** @type {View} */
const withRun = {
  ...view,
  tableau: [
    [0, [cardOf(1, 9)]],
    [0, []],
    [0, []],
    [0, []],
    [1, [-1, cardOf(0, 8), cardOf(2, 7)]],
    [0, [cardOf(3, 13)]],
    [0, []],
  ],
};

test("a hinted run marks the card at its bottom, the one the move picks up", () => {
  // 53 moves the 8♣ with the 7♥ on it onto a 9♦ (here in column 1: token 51).
  assert.deepEqual(hintMarks(withRun, "51"), { source: "t4", key: `c${cardOf(0, 8)}`, target: "t0" });
  assert.deepEqual(hintMarks(withRun, "51:2"), { source: "t4", key: `c${cardOf(0, 8)}`, target: "t0" });
});

test("hints are told in words, not notation", () => {
  assert.equal(
    hintText(withRun, hintFrame("51", "winning")),
    "Move 8♣ (with the 1 card on it) onto 9♦ (a winning line).",
  );
  assert.equal(hintText(view, hintFrame("D", "winning")), "Draw from the stock (a winning line).");
  assert.equal(
    hintText(view, hintFrame("WF", "heuristic")),
    "Move A♦ to its foundation (the most promising move; no win found in time).",
  );
  assert.equal(
    hintText(withRun, hintFrame("62", "winning")),
    "Move K♠ to the empty column 2 (a winning line).",
  );
  assert.equal(hintText(view, hintFrame(null, "lost")), "No winning line exists from here.");
  assert.equal(hintMoveText(view, "R"), "Turn the waste over");
});

/**
 * @param {string | null} m
 * @param {HintFrame["verdict"]} verdict
 * @returns {HintFrame}
 */
function hintFrame(m, verdict) {
  return { t: "hint", room: "r", rid: 1, m, verdict, msg: "raw" };
}
