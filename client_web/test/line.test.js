// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import "./english.js";

import { dealStock, describeLineMove, parseCard, playLine, stockAt } from "../src/line.js";

/** @import { View } from "../src/view.js" */

const RANKS = "A23456789TJQK";
const SEVEN_HEARTS = 32;
const EIGHT_CLUBS = 7;
const ACE_CLUBS = 0;
/** The deal's stock, top first: 2♦..K♥ without 7♥, then 8♥..Q♥ (24 cards). */
const STOCK = [
  ...Array.from({ length: 19 }, (_, i) => 14 + i).filter((c) => c !== SEVEN_HEARTS),
  33,
  34,
  35,
  36,
  37,
  38,
];

/** @param {number} card */
function text(card) {
  return `${RANKS[card % 13]}${"CDHS"[Math.floor(card / 13)]}`;
}

const DEAL = `klondike-deal 1\n# a test deal's stock only\nstock: ${STOCK.map(text).join(" ")}\n`;

/**
 * Column 1: A♣ face down under 7♥; column 2: 8♣; two cards turned to the waste.
 * @returns {View}
 */
function position() {
  return {
    tableau: [
      [1, [ACE_CLUBS, SEVEN_HEARTS]],
      [0, [EIGHT_CLUBS]],
      [0, []],
      [0, []],
      [0, []],
      [0, []],
      [0, []],
    ],
    waste: STOCK.slice(0, 2),
    stock: 22,
    foundations: [0, 0, 0, 0],
    foundations_hidden: 0,
    pass: 1,
  };
}

test("cards and a deal's stock are read from notation", () => {
  assert.equal(parseCard("7H"), SEVEN_HEARTS);
  assert.equal(parseCard("10h"), 35);
  assert.equal(parseCard("TH"), 35);
  assert.equal(parseCard("AS"), 39);
  assert.equal(parseCard("1H"), null);
  assert.deepEqual(dealStock(DEAL), STOCK);
  assert.equal(dealStock("klondike-deal 1\nstock: AS 2S\n"), null);
});

test("the stock of a view is the deal's order less its waste and gone cards", () => {
  assert.deepEqual(stockAt(position(), STOCK), STOCK.slice(2));
  // A card of the deal's stock on a column or a foundation has left it.
  const moved = { ...position(), tableau: position().tableau.map((p, i) => (i === 2 ? [0, [STOCK[5]]] : p)) };
  /** @type {View} */
  const view = { ...moved, stock: 21, tableau: /** @type {View["tableau"]} */ (moved.tableau) };
  assert.deepEqual(
    stockAt(view, STOCK),
    STOCK.slice(2).filter((c) => c !== STOCK[5]),
  );
  // A waste that is not the order's prefix, or a count that differs: not this deal.
  assert.equal(stockAt({ ...position(), waste: [STOCK[1], STOCK[0]] }, STOCK), null);
  assert.equal(stockAt({ ...position(), stock: 21 }, STOCK), null);
});

test("a line is played move by move, its moved and turned cards as ghosts", () => {
  const draw3 = { draw: 3, passes: 3, f2t: false };
  const stock = /** @type {number[]} */ (stockAt(position(), STOCK));
  const steps = playLine(position(), stock, ["12", "1F", "D", "WF", "D"], draw3);
  // WF does not apply (5♦ is no foundation's next card): the line stops before it.
  assert.equal(steps.length, 4);
  assert.deepEqual(
    steps.map((s) => s.text),
    ["the position shown", "7♥ onto 8♣", "A♣ to its foundation", "turn the stock: 4♦ 5♦ 6♦"],
  );
  const [start, one, two, three] = steps;
  assert.equal(start.ghosts.size, 0);
  assert.deepEqual(one.view.tableau[0], [0, [ACE_CLUBS]]);
  assert.deepEqual(one.view.tableau[1], [0, [EIGHT_CLUBS, SEVEN_HEARTS]]);
  assert.deepEqual([...one.ghosts].sort(), [ACE_CLUBS, SEVEN_HEARTS]);
  assert.deepEqual(two.view.foundations, [1, 0, 0, 0]);
  assert.deepEqual(two.view.tableau[0], [0, []]);
  assert.deepEqual(three.view.waste, STOCK.slice(0, 5));
  assert.equal(three.view.stock, 19);
  assert.deepEqual(three.stock, STOCK.slice(5));
  assert.ok(STOCK.slice(2, 5).every((c) => three.ghosts.has(c)));
  // The start position itself is left as it was.
  assert.deepEqual(position().tableau[0], start.view.tableau[0]);
});

test("turning the waste over gives the stock back in its order", () => {
  const draw1 = { draw: 1, passes: null, f2t: false };
  /** @type {View} */
  const view = { ...position(), waste: STOCK.slice(0, 2), stock: 0 };
  const steps = playLine(view, [], ["R", "D"], draw1);
  assert.equal(steps.length, 3);
  assert.equal(steps[1].text, "turn the waste over");
  assert.deepEqual(steps[1].view.waste, []);
  assert.equal(steps[1].view.pass, 2);
  assert.deepEqual(steps[2].view.waste, [STOCK[0]]);
  assert.equal(steps[2].text, "turn the stock: 2♦");
  assert.equal(describeLineMove(position(), "R"), "turn the waste over");
});
