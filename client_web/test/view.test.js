// @ts-check
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  applyDiff,
  emptyView,
  faceDownCount,
  faceUp,
  foundationCount,
  isComplete,
  topOf,
} from "../src/view.js";

/** @import { Diff, View } from "../src/view.js" */

/** @type {{seed: string, variant: string, start: View, steps: {m: string, d: Diff, view: View}[]}[]} */
const games = JSON.parse(readFileSync(new URL("./fixtures/games.json", import.meta.url), "utf8"));

test("applying the engine's diffs reproduces every view of the golden games", () => {
  for (const game of games) {
    let view = game.start;
    for (const [k, step] of game.steps.entries()) {
      view = applyDiff(view, step.d);
      assert.deepEqual(view, step.view, `${game.seed} ${game.variant} step ${k} (${step.m})`);
    }
  }
});

test("applyDiff never changes the view it is given", () => {
  const game = games[0];
  const frozen = structuredClone(game.start);
  applyDiff(game.start, game.steps[0].d);
  assert.deepEqual(game.start, frozen);
});

test("counts and tops read the view", () => {
  const view = games[0].start;
  assert.equal(faceDownCount(view), 21);
  assert.equal(foundationCount(view), 0);
  assert.equal(topOf(view, 0), view.tableau[0][1][0]);
  assert.deepEqual(faceUp(view, 6), [view.tableau[6][1][6]]);
  assert.equal(isComplete(view), false);
  assert.equal(foundationCount({ ...emptyView(), foundations: [13, 13, 13, 12], foundations_hidden: 1 }), 52);
});
