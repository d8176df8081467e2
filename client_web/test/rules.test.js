// @ts-check
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { UNKNOWN, cardOf } from "../src/cards.js";
import {
  autoMoveToken,
  canMove,
  finishToken,
  isForced,
  fitsFoundation,
  fitsTableau,
  foundationToken,
  moveToken,
  parseToken,
  parseVariant,
  predict,
  variantText,
  autoCompleteToken,
  isTriviallyWon,
} from "../src/rules.js";
import { applyDiff, topOf } from "../src/view.js";

/** @import { Source, Target } from "../src/rules.js" */
/** @import { Diff, View } from "../src/view.js" */

/** @type {{seed: string, variant: string, start: View, steps: {m: string, d: Diff, view: View}[]}[]} */
const games = JSON.parse(readFileSync(new URL("./fixtures/games.json", import.meta.url), "utf8"));
const [C, D, H, S] = [0, 1, 2, 3];

test("tableau fit: one lower, other colour; only a king on an empty pile", () => {
  assert.ok(fitsTableau(cardOf(H, 9), cardOf(S, 10)));
  assert.ok(!fitsTableau(cardOf(D, 9), cardOf(H, 10)));
  assert.ok(!fitsTableau(cardOf(C, 8), cardOf(H, 10)));
  assert.ok(fitsTableau(cardOf(C, 13), null));
  assert.ok(!fitsTableau(cardOf(C, 12), null));
  assert.ok(!fitsTableau(UNKNOWN, cardOf(S, 10)));
  assert.ok(!fitsTableau(cardOf(H, 9), UNKNOWN));
});

test("foundation fit: the ace first, then the next card of the suit", () => {
  assert.ok(fitsFoundation(cardOf(S, 1), [0, 0, 0, 0]));
  assert.ok(!fitsFoundation(cardOf(S, 2), [0, 0, 0, 0]));
  assert.ok(fitsFoundation(cardOf(D, 5), [0, 4, 0, 0]));
  assert.ok(!fitsFoundation(cardOf(H, 5), [0, 4, 0, 0]));
});

test("move tokens round trip through parseToken", () => {
  /** @type {[Source, Target, string][]} */
  const cases = [
    [{ kind: "waste" }, { kind: "tableau", index: 2 }, "W3"],
    [{ kind: "waste" }, { kind: "foundation" }, "WF"],
    [{ kind: "tableau", index: 0, size: 1 }, { kind: "foundation" }, "1F"],
    [{ kind: "tableau", index: 2, size: 1 }, { kind: "tableau", index: 5 }, "36"],
    [{ kind: "tableau", index: 2, size: 3 }, { kind: "tableau", index: 5 }, "36:3"],
    [{ kind: "foundation", suit: H }, { kind: "tableau", index: 2 }, "FH3"],
  ];
  for (const [from, to, token] of cases) {
    assert.equal(moveToken(from, to), token);
    const parsed = parseToken(token);
    assert.ok(parsed?.kind === "move");
    const size = from.kind === "tableau" ? (from.size ?? 1) : 1;
    assert.equal(
      moveToken(parsed.from.kind === "tableau" ? { size: 1, ...parsed.from } : parsed.from, parsed.to),
      token.replace(/:.*/, "") + (size > 1 ? `:${size}` : ""),
    );
  }
  assert.equal(moveToken({ kind: "tableau", index: 2, size: 1 }, { kind: "tableau", index: 2 }), null);
  assert.equal(moveToken({ kind: "tableau", index: 2, size: 2 }, { kind: "foundation" }), null);
  assert.deepEqual(parseToken("D"), { kind: "D" });
  assert.deepEqual(parseToken("R"), { kind: "R" });
  for (const bad of ["", "33", "W", "X1", "8F", "F3", "FX3", "36:"]) assert.equal(parseToken(bad), null, bad);
});

test("variant text parses and prints as the notation writes it", () => {
  assert.deepEqual(parseVariant("draw=3 passes=3 f2t=no"), { draw: 3, passes: 3, f2t: false });
  assert.deepEqual(parseVariant("draw=1 passes=unlimited f2t=yes"), { draw: 1, passes: null, f2t: true });
  assert.deepEqual(parseVariant("draw=3"), { draw: 3, passes: 3, f2t: false });
  assert.equal(variantText({ draw: 1, passes: null }), "draw=1 passes=unlimited f2t=no");
});

test("every prediction agrees with the engine's next view on every card the player knew", () => {
  let predicted = 0;
  for (const game of games) {
    const variant = parseVariant(game.variant);
    let view = game.start;
    for (const step of game.steps) {
      const next = applyDiff(view, step.d);
      const guess = predict(view, step.m, variant);
      if (guess !== null) {
        predicted += 1;
        // The only difference allowed: a card the move uncovered, still unknown.
        const masked = structuredClone(next);
        guess.tableau.forEach(([down, cards], i) => {
          cards.forEach((card, j) => {
            if (card === UNKNOWN && j >= down) masked.tableau[i][1][j] = UNKNOWN;
          });
        });
        assert.deepEqual(guess, masked, `${game.seed} ${step.m}`);
      } else {
        assert.ok(
          ["D"].includes(step.m) || step.m.startsWith("F"),
          `no prediction for legal ${step.m} in ${game.seed}`,
        );
      }
      view = next;
    }
  }
  assert.ok(predicted > 300, `only ${predicted} predictions checked`);
});

test("illegal moves are not predicted and cannot be dropped", () => {
  const view = games[0].start;
  const variant = parseVariant(games[0].variant);
  for (let from = 0; from < 7; from += 1) {
    for (let to = 0; to < 7; to += 1) {
      if (from === to) continue;
      /** @type {Source} */
      const source = { kind: "tableau", index: from, size: 1 };
      /** @type {Target} */
      const target = { kind: "tableau", index: to };
      const legal = canMove(view, source, target);
      const top = topOf(view, from);
      assert.ok(top !== null, "every column of a deal has cards");
      assert.equal(legal, fitsTableau(top, topOf(view, to)));
      assert.equal(predict(view, `${from + 1}${to + 1}`, variant) !== null, legal);
    }
  }
  assert.equal(predict(view, "R", variant), null, "no recycle while the stock has cards");
});

test("a double click offers the foundation only when the card fits", () => {
  /** @type {View} */
  const view = {
    tableau: [
      [0, [cardOf(S, 1)]],
      [0, [cardOf(H, 3)]],
      [0, []],
      [0, []],
      [0, []],
      [0, []],
      [0, []],
    ],
    waste: [cardOf(D, 2)],
    stock: 0,
    foundations: [0, 1, 0, 0],
    foundations_hidden: 0,
    pass: 1,
  };
  assert.equal(foundationToken(view, { kind: "tableau", index: 0 }), "1F");
  assert.equal(foundationToken(view, { kind: "tableau", index: 1 }), null);
  assert.equal(foundationToken(view, { kind: "waste" }), "WF");
});

test("auto-complete plays the lowest fitting top card until the game is won", () => {
  /** @type {View} */
  let view = {
    tableau: [
      [0, [cardOf(D, 3), cardOf(S, 2)]],
      [0, [cardOf(D, 2), cardOf(S, 1)]],
      [0, []],
      [0, []],
      [0, []],
      [0, []],
      [0, []],
    ],
    waste: [],
    stock: 0,
    foundations: [13, 1, 13, 0],
    foundations_hidden: 0,
    pass: 1,
  };
  const variant = parseVariant("draw=1");
  const tokens = [];
  for (let token = autoCompleteToken(view); isTriviallyWon(view) && token; token = autoCompleteToken(view)) {
    tokens.push(token);
    const next = predict(view, token, variant);
    assert.ok(next);
    view = next;
  }
  assert.deepEqual(tokens, ["2F", "1F", "2F", "1F"]);
  assert.deepEqual(view.foundations, [13, 3, 13, 2]);
  assert.equal(isTriviallyWon({ ...view, stock: 1 }), false);
});

test("one-click moves: home when safe, else onto a column, else home all the same", () => {
  const C = 0,
    D = 1,
    H = 2,
    S = 3;
  const rules = { draw: 1, passes: null, f2t: false };
  /** @type {import("../src/view.js").View} */
  const view = {
    tableau: [
      [0, [cardOf(H, 9)]],
      [1, [UNKNOWN, cardOf(C, 8)]],
      [0, [cardOf(S, 2)]],
      [0, []],
      [0, [cardOf(S, 13)]],
      [1, [UNKNOWN, cardOf(D, 13)]],
      [0, [cardOf(C, 5)]],
    ],
    waste: [cardOf(D, 4)],
    stock: 3,
    foundations: [4, 3, 0, 1],
    foundations_hidden: 0,
    pass: 0,
  };
  assert.equal(
    autoMoveToken(view, { kind: "tableau", index: 2, size: 1 }, rules),
    "3F",
    "a two is always safe",
  );
  assert.equal(autoMoveToken(view, { kind: "tableau", index: 1, size: 1 }, rules), "21", "8♣ onto 9♥");
  assert.equal(
    autoMoveToken(view, { kind: "tableau", index: 5, size: 1 }, rules),
    "64",
    "a king to the empty column",
  );
  assert.equal(
    autoMoveToken(view, { kind: "tableau", index: 4, size: 1 }, rules),
    null,
    "already at the bottom",
  );
  assert.equal(autoMoveToken(view, { kind: "waste" }, rules), "W7", "4♦ onto 5♣ before its unsafe home");
  assert.equal(
    autoMoveToken(view, { kind: "tableau", index: 6, size: 1 }, rules),
    "7F",
    "5♣ is not safe, but no column takes it",
  );
  assert.equal(
    autoMoveToken(view, { kind: "foundation", suit: C }, rules),
    null,
    "no cards back without f2t",
  );
  assert.equal(
    autoMoveToken(view, { kind: "foundation", suit: C }, { ...rules, f2t: true }),
    null,
    "4♣ fits nowhere",
  );
  const withFive = {
    ...view,
    tableau: view.tableau.map((pile, i) => (i === 3 ? [0, [cardOf(H, 5)]] : pile)),
  };
  assert.equal(
    autoMoveToken(
      /** @type {typeof view} */ (withFive),
      { kind: "foundation", suit: C },
      { ...rules, f2t: true },
    ),
    "FC4",
  );
});

test("the rest is forced with every card face up and draw-1 unlimited; finishing moves", () => {
  const C = 0,
    H = 2,
    S = 3;
  const unlimited = { draw: 1, passes: null, f2t: false };
  /** @type {import("../src/view.js").View} */
  const view = {
    tableau: [
      [0, [cardOf(S, 3)]],
      [0, [cardOf(H, 2)]],
      [0, []],
      [0, []],
      [0, []],
      [0, []],
      [0, []],
    ],
    waste: [cardOf(C, 2)],
    stock: 20,
    foundations: [1, 13, 1, 2],
    foundations_hidden: 0,
    pass: 0,
  };
  assert.ok(isForced(view, unlimited));
  assert.ok(!isForced(view, { ...unlimited, passes: 1 }), "limited passes: the stock's order matters");
  assert.ok(!isForced(view, { ...unlimited, draw: 3 }));
  assert.ok(
    !isForced({ ...view, tableau: view.tableau.map((p, i) => (i === 2 ? [1, [UNKNOWN]] : p)) }, unlimited),
  );
  assert.ok(isForced({ ...view, stock: 0, waste: [] }, { ...unlimited, draw: 3, passes: 3 }));
  assert.equal(finishToken(view, unlimited), "2F", "the lowest card first: 2♥");
  assert.equal(
    finishToken({ ...view, tableau: view.tableau.map((p, i) => (i === 1 ? [0, []] : p)) }, unlimited),
    "WF",
  );
  const stuck = { ...view, waste: [cardOf(C, 9)], tableau: view.tableau.map(() => [0, []]) };
  assert.equal(finishToken(/** @type {typeof view} */ (stuck), unlimited), "D");
  assert.equal(finishToken(/** @type {typeof view} */ ({ ...stuck, stock: 0 }), unlimited), "R");
});
