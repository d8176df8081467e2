// @ts-check
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  acknowledge,
  applyFrame,
  displayed,
  newBoard,
  newPlay,
  receive,
  reject,
  send,
  sinceOf,
} from "../src/game.js";
import { parseVariant, predict } from "../src/rules.js";

/** @import { Diff, View } from "../src/view.js" */
/** @import { BoardFrame, DiffFrame } from "../src/wire.js" */

/** @type {{seed: string, variant: string, start: View, steps: {m: string, d: Diff, view: View}[]}[]} */
const games = JSON.parse(readFileSync(new URL("./fixtures/games.json", import.meta.url), "utf8"));
const game = games[0];
const variant = parseVariant(game.variant);

/**
 * The own board's snapshot at the start of the first golden game.
 * @param {Partial<BoardFrame>} [extra]
 * @returns {BoardFrame}
 */
function snapshot(extra = {}) {
  return {
    t: "board",
    room: "R",
    seat: 0,
    audience: "own",
    epoch: 1,
    off: 0,
    view: game.start,
    moves: 0,
    status: "playing",
    score: 0,
    last_id: 0,
    ...extra,
  };
}

/**
 * The own board's diff for move `k` of the first golden game.
 * @param {number} k
 * @param {Partial<DiffFrame>} [extra]
 * @returns {DiffFrame}
 */
function diffFrame(k, extra = {}) {
  const step = game.steps[k];
  return {
    t: "diff",
    room: "R",
    seat: 0,
    audience: "own",
    epoch: 1,
    off: k + 1,
    d: step.d,
    m: step.m,
    moves: k + 1,
    status: "playing",
    score: 0,
    ...extra,
  };
}

test("a snapshot then diffs in order keep the board in step", () => {
  let board = newBoard(0, "spectator");
  ({ board } = applyFrame(board, snapshot()));
  for (let k = 0; k < 10; k += 1) {
    const result = applyFrame(board, diffFrame(k));
    assert.equal(result.gap, false);
    board = result.board;
  }
  assert.deepEqual(board.view, game.steps[9].view);
  assert.equal(board.off, 10);
  assert.deepEqual(sinceOf([board]), [[0, 1, 10]]);
});

test("a diff that skips an offset or belongs to another epoch is a gap", () => {
  const { board } = applyFrame(newBoard(0, "own"), snapshot());
  assert.equal(applyFrame(board, diffFrame(1)).gap, true);
  assert.equal(applyFrame(board, diffFrame(0, { epoch: 2 })).gap, true);
  assert.equal(applyFrame(newBoard(0, "own"), diffFrame(0)).gap, true, "no snapshot yet");
  assert.deepEqual(sinceOf([newBoard(3, "own")]), []);
});

test("moves in flight show at once, and the server's diff with their id settles them", () => {
  let play = receive(newPlay(0), snapshot({ last_id: 7 })).play;
  const tokens = game.steps.slice(0, 3).map((s) => s.m);
  const ids = [];
  for (const token of tokens) {
    const sent = send(play, token);
    play = sent.play;
    ids.push(sent.id);
  }
  assert.deepEqual(ids, [8, 9, 10], "ids continue above the snapshot's last_id");
  // What shows: the predictions, as far as this client can tell.
  let expected = game.start;
  for (const token of tokens) {
    const next = predict(expected, token, variant);
    if (next === null) break;
    expected = next;
  }
  assert.deepEqual(displayed(play, variant), expected);
  play = receive(play, diffFrame(0, { id: 8 })).play;
  assert.deepEqual(
    play.pending.map((m) => m.id),
    [9, 10],
  );
  play = acknowledge(play, 9);
  assert.deepEqual(
    play.pending.map((m) => m.id),
    [10],
  );
});

test("a refused move rolls back with every move made after it", () => {
  let play = receive(newPlay(0), snapshot()).play;
  for (const token of ["D", "D", "D"]) play = send(play, token).play;
  const { play: after, dropped } = reject(play, 2);
  assert.deepEqual(
    after.pending.map((m) => m.id),
    [1],
  );
  assert.deepEqual(
    dropped.map((m) => m.id),
    [2, 3],
  );
  assert.deepEqual(displayed(after, variant), game.start);
  assert.equal(send(after, "D").id, 4, "ids are never reused");
});

test("an undo is a move in flight too, and nothing is predicted past it", () => {
  let play = receive(newPlay(0), snapshot()).play;
  const { play: withUndo, id } = send(play, null);
  play = withUndo;
  assert.equal(id, 1);
  play = send(play, game.steps[0].m).play;
  assert.deepEqual(displayed(play, variant), game.start);
});
