// @ts-check
/**
 * The solver's analysis of a finished game as plain data: the verdict of each replay
 * step, runs of equal verdicts for the strip's text, the move that lost the game, and
 * the moves of a game record (for "play from here").
 *
 * Ply numbers are the record's: ply 0 is the deal and ply k the position after the
 * record's move k. A replay starts at ply `from` (a game started from a position), so
 * replay step n is ply `from + n`.
 */

import { t } from "./i18n.js";

/** @import { AnalysisBoard, Verdict } from "./wire.js" */

/**
 * The verdict after `n` moves of the replay (null when the analysis has no such ply).
 * @param {AnalysisBoard} board
 * @param {number} from record moves made before the replay's start
 * @param {number} n
 * @returns {{verdict: Verdict, line: string[] | null} | null}
 */
export function plyAt(board, from, n) {
  const ply = board.plies[from + n];
  return ply ? { verdict: ply.verdict, line: ply.line } : null;
}

/**
 * The replay's steps 0..`steps` as runs of one verdict: [{verdict, first, last}].
 * @param {AnalysisBoard} board
 * @param {number} from
 * @param {number} steps moves in the replay
 * @returns {{verdict: Verdict, first: number, last: number}[]}
 */
export function verdictRuns(board, from, steps) {
  /** @type {{verdict: Verdict, first: number, last: number}[]} */
  const runs = [];
  for (let n = 0; n <= steps; n++) {
    const verdict = board.plies[from + n]?.verdict ?? "unknown";
    const last = runs[runs.length - 1];
    if (last && last.verdict === verdict) last.last = n;
    else runs.push({ verdict, first: n, last: n });
  }
  return runs;
}

/**
 * The replay step after the move that lost the game (the first lost position whose
 * previous one was winnable), or null when there is none in this replay.
 * @param {AnalysisBoard} board
 * @param {number} from
 */
export function lostStep(board, from) {
  if (board.lost_at === null || board.lost_at === undefined) return null;
  const n = board.lost_at - from;
  return n >= 1 ? n : null;
}

/**
 * A sentence for a run of verdicts, e.g. "moves 0–33: a win was possible"
 * (`replay.run.*`).
 * @param {{verdict: Verdict, first: number, last: number}} run
 */
export function describeRun(run) {
  const what = t(`replay.run.${run.verdict}`);
  return run.first === run.last
    ? t("replay.run.one", { n: run.first, what })
    : t("replay.run.many", { first: run.first, last: run.last, what });
}

/**
 * The move tokens of a `klondike-game 1` record (its `moves:` line and the indented
 * lines continuing it).
 * @param {string} text
 * @returns {string[]}
 */
export function recordMoves(text) {
  /** @type {string[]} */
  const moves = [];
  let inMoves = false;
  for (const line of text.split("\n")) {
    if (!line.trim() || line.trimStart().startsWith("#")) continue;
    if (/^\s/.test(line)) {
      if (inMoves) moves.push(...line.trim().split(/\s+/));
      continue;
    }
    inMoves = line.startsWith("moves:");
    if (inMoves) {
      const rest = line.slice("moves:".length).trim();
      if (rest) moves.push(...rest.split(/\s+/));
    }
  }
  return moves;
}
