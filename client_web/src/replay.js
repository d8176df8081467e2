/**
 * Replays as plain data: every board's views precomputed from its start view and
 * per-move diffs, and a shared clock that says which move each board is at, so a race
 * replays all boards in sync on the time scale they were played.
 */

import { applyDiff } from "./view.js";

/** Precompute one board: {views, times, tokens}; views[k] is the view after k moves. */
export function prepareBoard(board) {
  const views = [board.start];
  const times = [0];
  const tokens = [null];
  for (const step of board.steps) {
    views.push(applyDiff(views[views.length - 1], step.d));
    times.push(step.t ?? times[times.length - 1]);
    tokens.push(step.m);
  }
  return { ...board, views, times, tokens };
}

/** How many moves of a prepared board were made by time `t` (ms from the start). */
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

/** Every distinct move time of all boards, sorted: the stops of step forward / back. */
export function eventTimes(boards) {
  const all = new Set([0]);
  for (const board of boards) for (const t of board.times) all.add(t);
  return [...all].sort((a, b) => a - b);
}

/** The next stop after `t` (or the last one). */
export function nextTime(times, t) {
  return times.find((x) => x > t) ?? times[times.length - 1];
}

/** The previous stop before `t` (or 0). */
export function previousTime(times, t) {
  let previous = 0;
  for (const x of times) {
    if (x >= t) break;
    previous = x;
  }
  return previous;
}
