// @ts-check
import "./english.js";

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { cardOf } from "../src/cards.js";
import { setLocale, useCatalog } from "../src/i18n.js";
import { hintMarks, hintMoveText, hintText, refusalText } from "../src/pages/own-game.js";
import { describeVariant } from "../src/rules.js";

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

test("a refused move says why in the player's words: the code's message, else the server's", () => {
  assert.equal(
    refusalText({ t: "error", code: "illegal_move", msg: "7♥ does not fit on 9♦" }),
    "Move refused: That move is not allowed.",
  );
  assert.equal(
    refusalText({ t: "error", code: "new_code", msg: "Something new" }),
    "Move refused: Something new",
  );
});

test("hints and variant labels speak the active language", async () => {
  for (const code of ["eu", "es", "fr"])
    useCatalog(code, JSON.parse(readFileSync(new URL(`../locales/${code}.json`, import.meta.url), "utf8")));
  const nowhere = {
    storage: null,
    get: /** @type {typeof fetch} */ (() => Promise.reject(new Error("no fetch"))),
  };
  const f2t = { draw: 1, passes: null, f2t: true };
  try {
    assert.equal(describeVariant({ draw: 3, passes: 1, f2t: false }), "Draw 3 · 1 pass");
    assert.equal(describeVariant(f2t), "Draw 1 · unlimited passes · cards back from foundations");
    await setLocale("fr", nowhere);
    assert.equal(
      hintText(withRun, hintFrame("51", "winning")),
      "Déplacez 8♣ (avec la carte posée dessus) sur 9♦ (une ligne gagnante).",
    );
    assert.equal(describeVariant({ draw: 3, passes: 3, f2t: false }), "Piocher 3 · 3 tours");
    await setLocale("eu", nowhere);
    assert.equal(
      hintText(withRun, hintFrame("62", "winning")),
      "Eraman K♠ 2. zutabe hutsera (irabazteko bidea).",
    );
    assert.equal(describeVariant({ draw: 1, passes: 1, f2t: false }), "1 atera · itzuli 1");
    await setLocale("es", nowhere);
    assert.equal(describeVariant(f2t), "Robar 1 · vueltas ilimitadas · devolver cartas desde las bases");
  } finally {
    await setLocale("en", nowhere);
  }
});
