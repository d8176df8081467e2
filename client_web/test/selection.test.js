// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import { UNKNOWN, cardOf } from "../src/cards.js";
import { layout } from "../src/layout.js";
import {
  DOUBLE_TAP_MS,
  activate,
  canDropOn,
  dropOn,
  dropTarget,
  emptySelection,
  follow,
  isDrag,
  isPicked,
  pickUp,
  pieceAt,
  placeOf,
  pressColumn,
  putDown,
  samePile,
  sourceAt,
  tap,
} from "../src/selection.js";

/** @import { Source } from "../src/rules.js" */
/** @import { PileName } from "../src/layout.js" */
/** @import { Outcome, Selection, Tap } from "../src/selection.js" */
/** @import { View } from "../src/view.js" */

const [C, D, H, S] = [0, 1, 2, 3];

/** @type {View} */
const view = {
  tableau: [
    [0, [cardOf(S, 13)]],
    [1, [UNKNOWN, cardOf(H, 12)]],
    [0, [cardOf(C, 11), cardOf(H, 10)]],
    [0, []],
    [0, [cardOf(D, 1)]],
    [2, [UNKNOWN, UNKNOWN, cardOf(S, 5)]],
    [0, [cardOf(D, 13)]],
  ],
  waste: [cardOf(C, 3), cardOf(H, 1)],
  stock: 5,
  foundations: [0, 0, 0, 0],
  foundations_hidden: 0,
  pass: 1,
};

/**
 * @param {Source | null} picked
 * @returns {Selection}
 */
function holding(picked) {
  return { ...emptySelection(), picked };
}

/**
 * A tap on the card at `index` of pile `name` (or on the pile's slot when `index` is null).
 * @param {PileName} name
 * @param {number | null} index
 * @param {number} now
 * @returns {Tap}
 */
function tapOn(name, index, now = 0) {
  if (index === null) return { key: `slot:${name}`, name, source: null, now };
  return { key: `${name}:${index}`, name, source: sourceAt(view, name, index), now };
}

/**
 * Taps one after the other, each a second apart; the last outcome.
 * @param {...[PileName, number | null]} taps
 */
function taps(...taps) {
  /** @type {Outcome} */
  let outcome = { selection: emptySelection(), move: null, stock: false };
  taps.forEach(([name, index], k) => {
    outcome = tap(outcome.selection, view, tapOn(name, index, 1000 * (k + 1)));
  });
  return outcome;
}

test("pile names stand for places, and places compare by pile whatever the run size", () => {
  assert.deepEqual(placeOf("stock"), { kind: "stock" });
  assert.deepEqual(placeOf("waste"), { kind: "waste" });
  assert.deepEqual(placeOf("f2"), { kind: "foundation", suit: 2 });
  assert.deepEqual(placeOf("t6"), { kind: "tableau", index: 6 });
  assert.ok(samePile({ kind: "tableau", index: 2, size: 2 }, { kind: "tableau", index: 2 }));
  assert.ok(!samePile({ kind: "tableau", index: 2 }, { kind: "tableau", index: 3 }));
  assert.ok(!samePile({ kind: "foundation", suit: 1 }, { kind: "foundation", suit: 2 }));
  assert.ok(samePile({ kind: "waste" }, { kind: "waste" }));
  assert.ok(!samePile({ kind: "waste" }, { kind: "stock" }));
});

test("a press picks up a column's face-up cards from the pressed one, or a pile's top card", () => {
  assert.deepEqual(sourceAt(view, "t2", 0), { kind: "tableau", index: 2, size: 2 });
  assert.deepEqual(sourceAt(view, "t2", 1), { kind: "tableau", index: 2, size: 1 });
  assert.equal(sourceAt(view, "t1", 0), null, "a face-down card");
  assert.deepEqual(sourceAt(view, "waste", 1), { kind: "waste" });
  assert.equal(sourceAt(view, "waste", 0), null, "under the waste's top");
  assert.deepEqual(sourceAt(view, "stock", 0), { kind: "stock" });
  const built = { ...view, foundations: [2, 0, 0, 0] };
  assert.deepEqual(sourceAt(built, "f0", 1), { kind: "foundation", suit: 0 });
  assert.equal(sourceAt(built, "f0", 0), null);
  const unknownUp = { ...view, tableau: view.tableau.with(5, [0, [UNKNOWN]]) };
  assert.equal(sourceAt(unknownUp, "t5", 0), null, "a face-up card this viewer does not know");
});

test("only known cards are picked up; putting down keeps nothing", () => {
  const picked = pickUp(emptySelection(), view, { kind: "waste" });
  assert.deepEqual(picked.picked, { kind: "waste" });
  assert.equal(pickUp(picked, view, { kind: "tableau", index: 3, size: 1 }).picked, null, "an empty column");
  assert.equal(pickUp(picked, view, { kind: "tableau", index: 1, size: 2 }).picked, null, "a face-down card");
  assert.equal(pickUp(picked, null, { kind: "waste" }).picked, null, "no view yet");
  assert.equal(putDown(picked).picked, null);
  const none = emptySelection();
  assert.equal(putDown(none), none, "nothing to put down: the same selection");
});

test("a new view keeps the picked cards only while their place still has them", () => {
  const picked = holding({ kind: "tableau", index: 2, size: 2 });
  assert.equal(follow(picked, view), picked);
  const shorter = { ...view, tableau: view.tableau.with(2, [0, [cardOf(C, 11)]]) };
  assert.equal(follow(picked, shorter).picked, null);
});

test("a drop offers the move when it fits, and puts the cards down either way", () => {
  const run = holding({ kind: "tableau", index: 2, size: 2 });
  assert.deepEqual(dropOn(run, view, { kind: "tableau", index: 1 }), {
    selection: putDown(run),
    move: "32:2",
    stock: false,
  });
  const refused = dropOn(run, view, { kind: "tableau", index: 0 });
  assert.equal(refused.move, null);
  assert.equal(refused.selection.picked, null);
  assert.equal(dropOn(holding({ kind: "waste" }), view, { kind: "foundation" }).move, "WF");
  const none = emptySelection();
  assert.deepEqual(dropOn(none, view, { kind: "foundation" }), { selection: none, move: null, stock: false });
});

test("keys 1..7 pick up one card more on each press, and drop on another column", () => {
  let { selection } = pressColumn(emptySelection(), view, 2);
  assert.deepEqual(selection.picked, { kind: "tableau", index: 2, size: 1 });
  ({ selection } = pressColumn(selection, view, 2));
  assert.deepEqual(selection.picked, { kind: "tableau", index: 2, size: 2 });
  const dropped = pressColumn(selection, view, 1);
  assert.equal(dropped.move, "32:2");
  ({ selection } = pressColumn(selection, view, 2));
  assert.deepEqual(selection.picked, { kind: "tableau", index: 2, size: 1 }, "round again after the run");
  const none = emptySelection();
  assert.equal(pressColumn(none, view, 3).selection, none, "an empty column picks up nothing");
  const king = holding({ kind: "tableau", index: 6, size: 1 });
  assert.equal(pressColumn(king, view, 3).move, "74");
});

test("Enter on a pile picks up, drops, puts down or turns the stock as a click would", () => {
  const waste = activate(emptySelection(), view, "waste").selection;
  assert.deepEqual(waste.picked, { kind: "waste" });
  assert.equal(activate(waste, view, "waste").selection.picked, null, "the same pile puts down");
  assert.equal(activate(waste, view, "f2").move, "WF");
  assert.deepEqual(activate(emptySelection(), view, "t4").selection.picked, {
    kind: "tableau",
    index: 4,
    size: 1,
  });
  const stock = activate(waste, view, "stock");
  assert.equal(stock.stock, true);
  assert.equal(stock.selection.picked, null);
});

test("a tap picks up, a tap on a pile that takes the cards moves them there", () => {
  assert.deepEqual(taps(["t2", 0]).selection.picked, { kind: "tableau", index: 2, size: 2 });
  assert.equal(taps(["t2", 0], ["t1", 1]).move, "32:2");
  assert.equal(taps(["t6", 0], ["t3", null]).move, "74", "a king to an empty column's slot");
  assert.equal(taps(["waste", 1], ["f2", null]).move, "WF");
});

test("a second tap on the picked-up cards puts them down; a tap deeper in the run takes fewer", () => {
  assert.equal(taps(["t2", 0], ["t2", 0]).selection.picked, null);
  assert.deepEqual(taps(["t2", 0], ["t2", 1]).selection.picked, { kind: "tableau", index: 2, size: 1 });
  assert.equal(taps(["waste", 1], ["waste", 1]).selection.picked, null);
});

test("a tap where the picked cards do not fit picks up what was tapped instead", () => {
  const outcome = taps(["t4", 0], ["t1", 1]);
  assert.equal(outcome.move, null);
  assert.deepEqual(outcome.selection.picked, { kind: "tableau", index: 1, size: 1 });
  const slot = taps(["t4", 0], ["t0", null]);
  assert.deepEqual(slot, { selection: { ...slot.selection, picked: null }, move: null, stock: false });
  assert.equal(taps(["t3", null]).selection.picked, null, "an empty slot picks up nothing");
});

test("a double tap sends a card to its foundation; a slower second tap does not", () => {
  const first = tap(emptySelection(), view, tapOn("t4", 0, 1000));
  const double = tap(first.selection, view, tapOn("t4", 0, 1000 + DOUBLE_TAP_MS - 1));
  assert.equal(double.move, "5F");
  assert.deepEqual(double.selection, emptySelection(), "a double tap is not the first of another");
  const slow = tap(first.selection, view, tapOn("t4", 0, 1000 + DOUBLE_TAP_MS));
  assert.equal(slow.move, null);
  assert.equal(slow.selection.picked, null, "the second tap put the card down");
  const nowhere = tap(first.selection, view, tapOn("t2", 1, 1100));
  assert.equal(nowhere.move, null, "a tap on another card is no double tap");
});

test("a tap on the stock turns it and puts the picked cards down", () => {
  const outcome = taps(["t2", 0], ["stock", 0]);
  assert.equal(outcome.stock, true);
  assert.equal(outcome.move, null);
  assert.equal(outcome.selection.picked, null);
});

test("the picked cards are marked, and so are the piles that take them", () => {
  const run = holding({ kind: "tableau", index: 2, size: 1 });
  assert.ok(isPicked(run, view, { place: "t2", index: 1 }));
  assert.ok(!isPicked(run, view, { place: "t2", index: 0 }));
  assert.ok(isPicked(holding({ kind: "tableau", index: 2, size: 2 }), view, { place: "t2", index: 0 }));
  assert.ok(isPicked(holding({ kind: "waste" }), view, { place: "waste", index: 1 }));
  assert.ok(!isPicked(emptySelection(), view, { place: "waste", index: 1 }));
  const built = { ...view, foundations: [0, 0, 3, 0] };
  assert.ok(isPicked(holding({ kind: "foundation", suit: 2 }), built, { place: "f2", index: 2 }));
  const king = holding({ kind: "tableau", index: 6, size: 1 });
  assert.ok(canDropOn(king, view, "t3"));
  assert.ok(!canDropOn(king, view, "t0"));
  assert.ok(!canDropOn(king, view, "stock"));
  assert.ok(canDropOn(holding({ kind: "waste" }), view, "f2"));
  assert.ok(!canDropOn(emptySelection(), view, "t3"));
});

test("a press becomes a drag after a few pixels, and drops on the nearest pile that fits", () => {
  assert.ok(!isDrag(3, 3));
  assert.ok(isDrag(3, 4));
  const placed = layout(view, { width: 800 });
  const { slots, metrics: m } = placed;
  const overColumn = (/** @type {number} */ i) => slots[`t${i}`].x + m.cardW / 2;
  /** @type {Source} */
  const run = { kind: "tableau", index: 2, size: 2 };
  assert.deepEqual(dropTarget(view, placed, run, overColumn(1) + 10, slots.t1.y + 40), {
    kind: "tableau",
    index: 1,
  });
  assert.equal(dropTarget(view, placed, run, overColumn(4), slots.t4.y + 40), null, "no fit there");
  assert.deepEqual(dropTarget(view, placed, { kind: "waste" }, slots.f1.x, slots.f1.y + 10), {
    kind: "foundation",
  });
  assert.equal(dropTarget(view, placed, { kind: "waste" }, slots.stock.x, slots.stock.y + 10), null);
});

test("a press lands on what the layout puts there, topmost card first, else a slot", () => {
  const placed = layout(view, { width: 800 });
  const { slots, metrics: m } = placed;
  const stock = pieceAt(placed, slots.stock.x + m.cardW / 2, slots.stock.y + m.cardH / 2);
  assert.equal(stock?.card?.place, "stock");
  const column = placed.cards.filter((c) => c.place === "t2");
  const top = column.reduce((a, b) => (b.z > a.z ? b : a));
  assert.equal(pieceAt(placed, top.x + 4, top.y + m.cardH - 4)?.card?.key, top.key);
  assert.deepEqual(pieceAt(placed, slots.t3.x + 2, slots.t3.y + 2), { card: null, slot: "t3" }, "empty");
  assert.equal(pieceAt(placed, -5, -5), null);
});
