// @ts-check
/**
 * The race ranking rule (DESIGN.md §5; the server's race/ranking.py) as a page applies it
 * live, from what it has seen: winners first, by finish time (earlier is better); then
 * everyone else by cards on the foundations (more is better), then by when they reached
 * that count (earlier is better). Equal keys share a rank (1, 1, 3): ties are ties.
 *
 * A page knows a time only when it saw it happen (the server's clock when a frame told
 * it). A finish or a count it did not see happen came before it was watching that
 * board, so before any it saw: an unknown time (null) is the earliest. Every live
 * standing of a page (the room's leader and field, a tournament's leaders) goes through
 * `liveRanking`; after a race the server's results rank. Nothing here touches the DOM.
 */

/** @import { BoardStatus, ProgressFrame } from "./wire.js" */

/**
 * A racer as a page sees it live.
 * @typedef {object} LiveRacer
 * @property {number} seat
 * @property {string} name
 * @property {number} found cards on the foundations
 * @property {number} moves
 * @property {BoardStatus} status
 * @property {number | null} [doneAt] when this page saw the board end (ms), if it did
 * @property {number | null} [foundAt] when this page saw the board reach `found` (ms), if it did
 */

/**
 * Ascending order of two times, an unknown one (null or absent) the earliest.
 * @param {number | null | undefined} a
 * @param {number | null | undefined} b
 */
function earlier(a, b) {
  const x = a ?? -Infinity;
  const y = b ?? -Infinity;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The rule: negative when `a` ranks before `b`, 0 when they tie.
 * @param {LiveRacer} a
 * @param {LiveRacer} b
 */
export function compareRacers(a, b) {
  const won = Number(b.status === "won") - Number(a.status === "won");
  if (won) return won;
  if (a.status === "won") return earlier(a.doneAt, b.doneAt);
  return b.found - a.found || earlier(a.foundAt, b.foundAt);
}

/**
 * Racers best first, each with its rank: equal ones share the better rank, and seat
 * order keeps them in a steady order. A new array; the argument is not changed.
 * @template {LiveRacer} R
 * @param {R[]} racers
 * @returns {(R & {rank: number})[]}
 */
export function liveRanking(racers) {
  const sorted = [...racers].sort((a, b) => compareRacers(a, b) || a.seat - b.seat);
  /** @type {(R & {rank: number})[]} */
  const ranked = [];
  sorted.forEach((racer, i) => {
    const before = ranked[i - 1];
    const rank = before && compareRacers(before, racer) === 0 ? before.rank : i + 1;
    ranked.push({ ...racer, rank });
  });
  return ranked;
}

/**
 * The seat to follow: the one racer ranked first, once it has won or has a card home;
 * null before anyone scores, when several share the first rank (ties are ties), and on
 * a one-player board (there is no one to lead).
 * @param {LiveRacer[]} racers
 */
export function leaderSeat(racers) {
  if (racers.length < 2) return null;
  const [first, second] = liveRanking(racers);
  if (first.status !== "won" && !first.found) return null;
  return second.rank === first.rank ? null : first.seat;
}

/**
 * When a page saw each board reach its count of cards home, for `LiveRacer.foundAt`.
 * A count a board already showed when first seen has no time (it was reached before).
 */
export class ReachedTimes {
  constructor() {
    /** @type {Map<number, {found: number, at: number | null}>} */
    this.seen = new Map();
  }

  /**
   * Board `seat` shows `found` cards home at `now` (ms, the server's clock).
   * @param {number} seat
   * @param {number} found
   * @param {number} now
   */
  note(seat, found, now) {
    const last = this.seen.get(seat);
    if (!last) this.seen.set(seat, { found, at: null });
    else if (last.found !== found) this.seen.set(seat, { found, at: now });
  }

  /**
   * When board `seat` was seen reaching `found` cards home; null if it was not.
   * @param {number} seat
   * @param {number} found
   */
  at(seat, found) {
    const last = this.seen.get(seat);
    return last && last.found === found ? last.at : null;
  }

  clear() {
    this.seen.clear();
  }
}

/**
 * What a page that follows a race live keeps of its boards' progress.
 * @typedef {object} LiveProgress
 * @property {Map<number, {found: number, down: number, moves: number, status: BoardStatus}>} progress
 * @property {Map<number, number>} doneAt when (server ms) the page saw each board end
 * @property {ReachedTimes} reached
 * @property {(seat: number) => number} foundOf the cards home the page shows of a board
 */

/**
 * A `progress` frame's boards taken in at `now` (server ms): each board's progress,
 * when the page saw it stop playing, and when it reached its count of cards home.
 * @param {LiveProgress} page
 * @param {ProgressFrame["boards"]} boards
 * @param {number} now
 */
export function takeProgress(page, boards, now) {
  for (const [seat, found, down, moves, status] of boards) {
    if (status !== "playing" && page.progress.get(seat)?.status === "playing" && !page.doneAt.has(seat))
      page.doneAt.set(seat, now);
    page.progress.set(seat, { found, down, moves, status });
    page.reached.note(seat, page.foundOf(seat), now);
  }
}
