// @ts-check
/**
 * Replays as plain data: every board's views precomputed from its start view and
 * per-move diffs, and a shared clock that says which move each board is at, so a race
 * replays all boards in sync on the time scale they were played.
 */

import { applyDiff } from "./view.js";

/** @import { View } from "./view.js" */
/** @import { ReplayBoardData } from "./wire.js" */

/**
 * A board ready to replay: `views[k]` is the view after k moves, made at `times[k]` (ms
 * from the start) with token `tokens[k]` (null before the first move).
 * @typedef {ReplayBoardData & {views: View[], times: number[], tokens: (string | null)[]}} PreparedBoard
 */

/**
 * Precompute one board: {views, times, tokens}; views[k] is the view after k moves.
 * @template {{start: View, steps: ReplayBoardData["steps"]}} B
 * @param {B} board
 * @returns {B & {views: View[], times: number[], tokens: (string | null)[]}}
 */
export function prepareBoard(board) {
  const views = [board.start];
  const times = [0];
  /** @type {(string | null)[]} */
  const tokens = [null];
  for (const step of board.steps) {
    views.push(applyDiff(views[views.length - 1], step.d));
    times.push(step.t ?? times[times.length - 1]);
    tokens.push(step.m);
  }
  return { ...board, views, times, tokens };
}

/**
 * The replay's first instant, before every move: a move can be made at 0 ms (a practice
 * game's clock starts at its first move), so the start is a stop of its own before it.
 */
export const START = -1;

/**
 * How many moves of a prepared board were made by time `t` (ms from the start).
 * @param {{times: number[]}} board
 * @param {number} t
 */
export function movesAt(board, t) {
  let lo = 0;
  let hi = board.times.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (board.times[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The start and every distinct move time of all boards, sorted: the stops of step
 * forward / back.
 * @param {{times: number[]}[]} boards
 */
export function eventTimes(boards) {
  const all = new Set([START]);
  for (const board of boards) for (const t of board.times.slice(1)) all.add(t);
  return [...all].sort((a, b) => a - b);
}

/**
 * The next stop after `t` (or the last one).
 * @param {number[]} times
 * @param {number} t
 */
export function nextTime(times, t) {
  return times.find((x) => x > t) ?? times[times.length - 1];
}

/**
 * The previous stop before `t` (or `START`).
 * @param {number[]} times
 * @param {number} t
 */
export function previousTime(times, t) {
  let previous = START;
  for (const x of times) {
    if (x >= t) break;
    previous = x;
  }
  return previous;
}
