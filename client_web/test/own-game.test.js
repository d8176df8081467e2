// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import { cardOf } from "../src/cards.js";
import { hintMarks } from "../src/pages/own-game.js";

/** @import { View } from "../src/view.js" */

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
