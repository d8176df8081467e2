// @ts-check
/**
 * Headless client state of boards, as pure transitions over plain values.
 *
 * `board` and `diff` frames keep a confirmed copy of each board, checked by epoch and
 * offset; the player's own board also keeps the moves sent but not yet confirmed, shown
 * on top of the confirmed view as predictions. The server's answer confirms them (its
 * diff carries the move id, or an `ack` names it) or rolls them back (an `error`
 * naming the id). Nothing here touches the DOM or the network.
 */

import { predict } from "./rules.js";
import { applyDiff, emptyView } from "./view.js";

/** @import { Variant } from "./rules.js" */
/** @import { View } from "./view.js" */
/** @import { BoardFrame, BoardStatus, DiffFrame } from "./wire.js" */

/**
 * A board as this client keeps it from its frames.
 * @typedef {object} Board
 * @property {number} seat
 * @property {"own" | "spectator"} audience
 * @property {number} epoch
 * @property {number} off the last offset applied (-1 before the snapshot)
 * @property {View} view
 * @property {number} moves
 * @property {BoardStatus} status
 * @property {number} score
 * @property {number} lastId the last move id the server applied (own board)
 * @property {string | null} lastMove the last event's move token
 * @property {boolean} ready true once a snapshot has arrived
 */

/**
 * A move sent and not yet confirmed: its id and token (null for an undo).
 * @typedef {{id: number, m: string | null}} PendingMove
 */

/**
 * The player's own board: confirmed state, moves in flight, and the next move id.
 * @typedef {{board: Board, pending: PendingMove[], nextId: number}} Play
 */

/**
 * A board before its first snapshot.
 * @param {number} seat
 * @param {"own" | "spectator"} audience
 * @returns {Board}
 */
export function newBoard(seat, audience) {
  return {
    seat,
    audience,
    epoch: 0,
    off: -1,
    view: emptyView(),
    moves: 0,
    status: "playing",
    score: 0,
    lastId: 0,
    lastMove: null,
    ready: false,
  };
}

/**
 * A board after a `board` or `diff` frame: `{board, gap}`. `gap` is true when a diff
 * does not follow the last applied offset; the board is then unchanged and the caller
 * should rejoin with `since` to get the missing events or a snapshot.
 * @param {Board} board
 * @param {BoardFrame | DiffFrame} frame
 * @returns {{board: Board, gap: boolean}}
 */
export function applyFrame(board, frame) {
  if (frame.t === "board") {
    return {
      gap: false,
      board: {
        ...board,
        epoch: frame.epoch,
        off: frame.off,
        view: frame.view,
        moves: frame.moves,
        status: frame.status,
        score: frame.score ?? board.score,
        lastId: frame.last_id ?? board.lastId,
        lastMove: null,
        ready: true,
      },
    };
  }
  if (!board.ready || frame.epoch !== board.epoch || frame.off !== board.off + 1) {
    return { gap: true, board };
  }
  return {
    gap: false,
    board: {
      ...board,
      off: frame.off,
      view: applyDiff(board.view, frame.d),
      moves: frame.moves,
      status: frame.status,
      score: frame.score ?? board.score,
      lastId: frame.id ?? board.lastId,
      lastMove: frame.m ?? null,
    },
  };
}

/**
 * The player's own board, before its first snapshot.
 * @param {number} seat
 * @returns {Play}
 */
export function newPlay(seat) {
  return { board: newBoard(seat, "own"), pending: [], nextId: 1 };
}

/**
 * After sending move token `m` (or an undo when `m` is null): the play and the id used.
 * @param {Play} play
 * @param {string | null} m
 * @returns {{play: Play, id: number}}
 */
export function send(play, m) {
  const id = Math.max(play.nextId, play.board.lastId + 1);
  return { play: { ...play, pending: [...play.pending, { id, m }], nextId: id + 1 }, id };
}

/**
 * Drop the moves the server has confirmed (ids up to `lastId`).
 * @param {PendingMove[]} pending
 * @param {number} lastId
 */
function settle(pending, lastId) {
  return pending.filter((move) => move.id > lastId);
}

/**
 * After the server's own `board` or `diff` frame for this board.
 * @param {Play} play
 * @param {BoardFrame | DiffFrame} frame
 * @returns {{play: Play, gap: boolean}}
 */
export function receive(play, frame) {
  const { board, gap } = applyFrame(play.board, frame);
  if (gap) return { play, gap };
  const pending = settle(play.pending, board.lastId);
  return { play: { board, pending, nextId: Math.max(play.nextId, board.lastId + 1) }, gap: false };
}

/**
 * After `ack` (the id was applied before): that move and earlier ones are settled.
 * @param {Play} play
 * @param {number} id
 * @returns {Play}
 */
export function acknowledge(play, id) {
  return { ...play, pending: settle(play.pending, id) };
}

/**
 * After an `error` naming move `id`: that move and every later one are rolled back
 * (they were predicted on top of it). Returns the play and the rolled back moves.
 * @param {Play} play
 * @param {number} id
 * @returns {{play: Play, dropped: PendingMove[]}}
 */
export function reject(play, id) {
  const kept = play.pending.filter((move) => move.id < id);
  const dropped = play.pending.filter((move) => move.id >= id);
  return { play: { ...play, pending: kept }, dropped };
}

/**
 * What to draw: the confirmed view with the pending moves predicted on top, stopping
 * at the first one this client cannot predict (the server's answer will show it).
 * @param {Play} play
 * @param {Variant} variant
 * @returns {View}
 */
export function displayed(play, variant) {
  let view = play.board.view;
  for (const move of play.pending) {
    if (move.m === null) break;
    const next = predict(view, move.m, variant);
    if (next === null) break;
    view = next;
  }
  return view;
}

/**
 * Resume offsets for `join`'s `since`: [seat, epoch, off] of every board applied.
 * @param {Board[]} boards
 * @returns {[number, number, number][]}
 */
export function sinceOf(boards) {
  return boards.filter((b) => b.ready).map((b) => [b.seat, b.epoch, b.off]);
}
