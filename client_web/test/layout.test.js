// @ts-check
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { indexDepth, indexWidth, layout, metrics } from "../src/layout.js";
import { applyDiff } from "../src/view.js";

/** @import { Diff, View } from "../src/view.js" */

/** @type {{seed: string, variant: string, start: View, steps: {m: string, d: Diff, view: View}[]}[]} */
const games = JSON.parse(readFileSync(new URL("./fixtures/games.json", import.meta.url), "utf8"));

/**
 * Every view of every golden game, with its game.
 * @returns {Generator<[View, (typeof games)[number]]>}
 */
function* allViews() {
  for (const game of games) {
    let view = game.start;
    yield [view, game];
    for (const step of game.steps) {
      view = applyDiff(view, step.d);
      yield [view, game];
    }
  }
}

test("every card gets one element key, and known cards are keyed by identity", () => {
  for (const [view] of allViews()) {
    const placed = layout(view, { width: 800 });
    const keys = placed.cards.map((c) => c.key);
    assert.equal(new Set(keys).size, keys.length);
    for (const c of placed.cards) if (c.up) assert.equal(c.key, `c${c.card}`);
  }
});

test("cards stay inside the width, from a phone to a desktop", () => {
  for (const width of [320, 390, 768, 1280, 1920]) {
    for (const [view, game] of allViews()) {
      const placed = layout(view, { width, draw: game.variant.includes("draw=3") ? 3 : 1 });
      const { cardW } = placed.metrics;
      for (const c of placed.cards) {
        assert.ok(c.x >= 0 && c.x + cardW <= width + 0.5, `x ${c.x} at width ${width}`);
      }
    }
  }
});

test("with a height to fit, the columns are squeezed into it", () => {
  const height = 520;
  for (const [view] of allViews()) {
    const placed = layout(view, { width: 1000, height });
    const { cardH } = placed.metrics;
    for (const c of placed.cards) assert.ok(c.y + cardH <= height + 1, `bottom ${c.y + cardH} > ${height}`);
    assert.ok(placed.height <= height + 1);
  }
});

test("draw-3 fans the top three waste cards to the right, the playable one last", () => {
  const view = { ...games[1].start, waste: [1, 2, 3, 4], stock: 20 };
  const placed = layout(view, { width: 700, draw: 3 });
  const waste = placed.cards.filter((c) => c.place === "waste");
  const xs = waste.map((c) => c.x);
  assert.equal(xs[0], xs[1]);
  assert.ok(xs[1] < xs[2] && xs[2] < xs[3]);
  assert.ok(waste[3].z > waste[2].z);
});

test("card size follows the width and stops growing on large screens", () => {
  assert.ok(metrics(390).cardW < metrics(800).cardW);
  assert.equal(metrics(1920).cardW, metrics(2560).cardW);
});

test("a card lying on a face-up (or revealed) card leaves its whole index showing", () => {
  for (const [width, height] of [
    [1342, 640],
    [1896, 950],
    [377, 700],
    [352, 0],
    [347, 640],
  ]) {
    for (const [view, game] of allViews()) {
      for (const reveal of [false, true]) {
        const draw = game.variant.includes("draw=3") ? 3 : 1;
        const placed = layout(view, { width, height, draw, reveal });
        const depth = indexDepth(placed.metrics);
        for (const c of placed.cards) {
          if (!c.up || c.place === "stock") continue;
          const next = placed.cards.find((o) => o.place === c.place && o.index === c.index + 1);
          if (!next) continue;
          if (c.place[0] === "t") assert.ok(next.y - c.y >= depth, `${c.key} at ${width}x${height}`);
          if (c.place === "waste" && next.x !== c.x) assert.ok(next.x - c.x >= indexWidth(placed.metrics));
        }
      }
    }
  }
});

test("the columns start below the stock count", () => {
  for (const width of [320, 390, 800, 1920]) {
    const placed = layout(games[0].start, { width });
    assert.ok(placed.slots.t0.y - (placed.slots.stock.y + placed.metrics.cardH) >= 20);
  }
});
