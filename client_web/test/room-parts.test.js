// @ts-check
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import "./english.js";
import { cardOf } from "../src/cards.js";
import { describeMove } from "../src/pages/room-parts.js";

/** @import { Diff, View } from "../src/view.js" */

/** @type {{seed: string, variant: string, start: View, steps: {m: string, d: Diff, view: View}[]}[]} */
const games = JSON.parse(readFileSync(new URL("./fixtures/games.json", import.meta.url), "utf8"));

test("moves are put into words with the cards they move", () => {
  /** @type {View} */
  const view = {
    tableau: [
      [0, [cardOf(2, 12)]],
      [0, [cardOf(0, 13)]],
      [0, []],
      [0, []],
      [0, []],
      [0, []],
      [0, []],
    ],
    waste: [cardOf(3, 1)],
    stock: 3,
    foundations: [0, 0, 0, 0],
    foundations_hidden: 0,
    pass: 1,
  };
  assert.equal(describeMove(view, "12"), "Queen of hearts to column 2");
  assert.equal(describeMove(view, "WF"), "Ace of spades to its foundation");
  assert.equal(describeMove(view, "D"), "Turned the stock");
  assert.equal(describeMove(view, "R"), "Turned the waste over");
  for (const step of games[0].steps) assert.equal(typeof describeMove(games[0].start, step.m), "string");
});
