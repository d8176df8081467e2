// @ts-check
/**
 * What the player has picked up on their own board, and how taps, keys and drops
 * change it: plain state and pure transitions (model: chessground's headless state).
 *
 * A transition returns the next selection and what it asks of the page: a move token
 * to offer, or a turn of the stock. Nothing here touches the DOM, reads the clock or
 * sends anything; the board renders the selection and carries the requests out.
 */

import { UNKNOWN } from "./cards.js";
import { autoMoveToken, canMove, cardsAt, foundationToken, moveToken } from "./rules.js";

/** @import { Place, Source, Variant } from "./rules.js" */
/** @import { View } from "./view.js" */
/** @import { PileName, Placed, PlacedCard } from "./layout.js" */

/** Pointer travel (px) that turns a press into a drag. */
export const DRAG_THRESHOLD = 5;
/** Two taps on the same card or pile within this many ms are a double tap. */
export const DOUBLE_TAP_MS = 350;

/**
 * @typedef {object} Selection
 * @property {Source | null} picked the cards picked up, or null
 * @property {{key: string | null, at: number}} lastTap what was tapped last and when (ms), for double taps
 */

/**
 * @typedef {object} Outcome
 * @property {Selection} selection the selection after the input
 * @property {string | null} move a move token to offer the page, or null
 * @property {boolean} stock true when the stock is to be turned (or the waste turned over)
 */

/**
 * What a tap landed on.
 * @typedef {object} Tap
 * @property {string} key the tapped card's element key, or `slot:NAME` for an empty pile
 * @property {PileName} name the pile it belongs to
 * @property {Source | null} source what a press there picks up (see `sourceAt`), null for a pile
 * @property {number} now the time of the tap, in ms
 * @property {Variant | null} [autoMove] one-click moves are on (with the game's rules)
 */

/** @returns {Selection} nothing picked up, no tap yet */
export function emptySelection() {
  return { picked: null, lastTap: { key: null, at: 0 } };
}

/**
 * @param {Selection} selection
 * @returns {Outcome} the selection, asking nothing of the page
 */
function only(selection) {
  return { selection, move: null, stock: false };
}

/**
 * The place a pile name stands for: "stock", "waste", "f0".."f3", "t0".."t6".
 * @param {PileName} name
 * @returns {Source}
 */
export function placeOf(name) {
  if (name === "stock") return { kind: "stock" };
  if (name === "waste") return { kind: "waste" };
  if (name[0] === "f") return { kind: "foundation", suit: Number(name.slice(1)) };
  return { kind: "tableau", index: Number(name.slice(1)) };
}

/**
 * True when two places are the same pile (whatever the run sizes).
 * @param {Place} a
 * @param {Place} b
 */
export function samePile(a, b) {
  if (a.kind === "tableau") return b.kind === "tableau" && a.index === b.index;
  if (a.kind === "foundation") return b.kind === "foundation" && a.suit === b.suit;
  return a.kind === b.kind;
}

/**
 * The run size of a tableau place (undefined for other places).
 * @param {Source} place
 */
function sizeOf(place) {
  return place.kind === "tableau" ? place.size : undefined;
}

/**
 * What a press on the card at `index` of pile `name` would pick up, or null: the
 * stock, the waste's or a foundation's top card, or a column's face-up cards from
 * that one to the top.
 * @param {View} view
 * @param {PileName} name
 * @param {number} index
 * @returns {Source | null}
 */
export function sourceAt(view, name, index) {
  if (name === "stock") return { kind: "stock" };
  if (name === "waste") return index === view.waste.length - 1 ? { kind: "waste" } : null;
  if (name[0] === "f") {
    const suit = Number(name[1]);
    return index === view.foundations[suit] - 1 ? { kind: "foundation", suit } : null;
  }
  const column = Number(name[1]);
  const [faceDown, cards] = view.tableau[column];
  if (index < faceDown || cards[index] === UNKNOWN) return null;
  return { kind: "tableau", index: column, size: cards.length - index };
}

// ------------------------------------------------------------ transitions

/**
 * Pick up the cards of `from`; nothing is picked up when it has no cards to give or
 * one of them is unknown.
 * @param {Selection} selection
 * @param {View | null} view
 * @param {Source} from
 * @returns {Selection}
 */
export function pickUp(selection, view, from) {
  const cards = view && cardsAt(view, from);
  return { ...selection, picked: cards && !cards.includes(UNKNOWN) ? from : null };
}

/**
 * Put the picked cards back where they are (the same selection when none are).
 * @param {Selection} selection
 * @returns {Selection}
 */
export function putDown(selection) {
  return selection.picked ? { ...selection, picked: null } : selection;
}

/**
 * After the board shows a new view: the picked cards stay picked while their place
 * still has that many to give.
 * @param {Selection} selection
 * @param {View} view
 * @returns {Selection}
 */
export function follow(selection, view) {
  return selection.picked && !cardsAt(view, selection.picked) ? putDown(selection) : selection;
}

/**
 * Put the picked cards on `to`: they are put down either way, and the move is offered
 * when it looks legal.
 * @param {Selection} selection
 * @param {View} view
 * @param {Place} to
 * @returns {Outcome}
 */
export function dropOn(selection, view, to) {
  const from = selection.picked;
  const move = from && canMove(view, from, to) ? moveToken(from, to) : null;
  return { selection: putDown(selection), move, stock: false };
}

/**
 * Key 1..7: pick up that column's top card, again one card more (round to one after
 * the whole run); with other cards picked up, drop them on that column.
 * @param {Selection} selection
 * @param {View} view
 * @param {number} index the column, 0..6
 * @returns {Outcome}
 */
export function pressColumn(selection, view, index) {
  const picked = selection.picked;
  if (picked && !(picked.kind === "tableau" && picked.index === index)) {
    return dropOn(selection, view, { kind: "tableau", index });
  }
  const [faceDown, cards] = view.tableau[index];
  const up = cards.length - faceDown;
  if (!up) return only(selection);
  const size = picked ? ((sizeOf(picked) ?? 1) % up) + 1 : 1;
  return only(pickUp(selection, view, { kind: "tableau", index, size }));
}

/**
 * Enter on a focused pile, as a click there: the stock turns; with cards picked up,
 * the same pile puts them down and another takes them; else the pile's cards are
 * picked up (a column as key 1..7 does).
 * @param {Selection} selection
 * @param {View} view
 * @param {PileName} name
 * @returns {Outcome}
 */
export function activate(selection, view, name) {
  if (name === "stock") return { selection: putDown(selection), move: null, stock: true };
  const place = placeOf(name);
  if (selection.picked) {
    if (samePile(place, selection.picked)) return only(putDown(selection));
    return dropOn(selection, view, place);
  }
  if (place.kind === "tableau") return pressColumn(selection, view, place.index);
  return only(pickUp(selection, view, place));
}

/**
 * A click or tap (a press that did not become a drag). On the stock it turns it. With
 * one-click moves on and nothing picked up, a card goes to its best place
 * (`autoMoveToken`; picked up as usual when it has none). A double tap sends a card to its foundation when it fits. With cards picked up, a tap
 * on their own pile picks up the run from the tapped card instead, or puts them down
 * when that is the same run; a tap elsewhere drops them there, or when they do not
 * fit there picks up what was tapped.
 * @param {Selection} selection
 * @param {View} view
 * @param {Tap} tap
 * @returns {Outcome}
 */
export function tap(selection, view, { key, name, source, now, autoMove = null }) {
  const last = selection.lastTap;
  const double = last.key === key && now - last.at < DOUBLE_TAP_MS;
  /** @type {Selection} */
  const tapped = { ...selection, lastTap: { key, at: now } };
  if (name === "stock") return { selection: putDown(tapped), move: null, stock: true };
  if (autoMove && source && !tapped.picked) {
    const token = autoMoveToken(view, source, autoMove);
    if (token)
      return { selection: { ...emptySelection(), lastTap: { key: null, at: 0 } }, move: token, stock: false };
  }
  if (double && source) {
    const token = foundationToken(view, source);
    if (token) return { selection: emptySelection(), move: token, stock: false };
  }
  let next = tapped;
  if (tapped.picked) {
    const same = samePile(placeOf(name), tapped.picked);
    if (same && source && sizeOf(source) !== sizeOf(tapped.picked)) {
      return only(pickUp(tapped, view, source));
    }
    if (same) return only(putDown(tapped));
    const dropped = dropOn(tapped, view, placeOf(name));
    if (dropped.move) return dropped;
    next = dropped.selection;
  }
  return only(source ? pickUp(next, view, source) : next);
}

// ------------------------------------------------------------ what to show

/**
 * True when the placed card `item` is one of the picked cards.
 * @param {Selection} selection
 * @param {View} view
 * @param {Pick<PlacedCard, "place" | "index">} item
 */
export function isPicked(selection, view, item) {
  const picked = selection.picked;
  if (!picked) return false;
  if (picked.kind === "tableau") {
    return (
      item.place === `t${picked.index}` &&
      item.index >= view.tableau[picked.index][1].length - (picked.size ?? 1)
    );
  }
  if (picked.kind === "waste") return item.place === "waste" && item.index === view.waste.length - 1;
  if (picked.kind === "foundation") {
    return item.place === `f${picked.suit}` && item.index === view.foundations[picked.suit] - 1;
  }
  return false;
}

/**
 * True when the picked cards may be dropped on pile `name` (to mark it as a target).
 * @param {Selection} selection
 * @param {View} view
 * @param {PileName} name
 */
export function canDropOn(selection, view, name) {
  if (!selection.picked || name === "stock" || name === "waste") return false;
  return canMove(view, selection.picked, placeOf(name));
}

/**
 * True once a press has travelled far enough to be a drag.
 * @param {number} dx
 * @param {number} dy
 */
export function isDrag(dx, dy) {
  return Math.hypot(dx, dy) >= DRAG_THRESHOLD;
}

/**
 * Where cards dragged from `from` land when dropped with their first card's centre at
 * (cx, cy) on the placed board: the foundations above the columns' row (right of the
 * waste), else the nearer of the two closest columns that takes them; null when no
 * place nearby does.
 * @param {View} view
 * @param {Placed} placed
 * @param {Source} from
 * @param {number} cx
 * @param {number} cy
 * @returns {Place | null}
 */
export function dropTarget(view, placed, from, cx, cy) {
  const { slots, metrics: m } = placed;
  const rowY = slots.t0.y;
  /** @type {Place[]} */
  const candidates = [];
  if (cy < rowY - m.gap / 2) {
    if (cx > slots.f0.x - m.gap - m.cardW / 2) candidates.push({ kind: "foundation" });
  } else {
    const byDistance = [0, 1, 2, 3, 4, 5, 6]
      .map((i) => ({ i, d: Math.abs(slots[`t${i}`].x + m.cardW / 2 - cx) }))
      .filter(({ d }) => d < m.cardW + m.gap)
      .sort((a, b) => a.d - b.d);
    for (const { i } of byDistance.slice(0, 2)) candidates.push({ kind: "tableau", index: i });
  }
  return candidates.find((to) => canMove(view, from, to)) ?? null;
}

/**
 * What a press at (x, y) on the placed board lands on, by where every card is going,
 * not where an animation shows it now (a card sliding out of the stock must not catch
 * the next click on the stock): the topmost card there, else a pile's slot, else null.
 * @param {Placed} placed
 * @param {number} x
 * @param {number} y
 * @returns {{card: PlacedCard, slot: null} | {card: null, slot: PileName} | null}
 */
export function pieceAt(placed, x, y) {
  const { cardW, cardH } = placed.metrics;
  /** @param {{x: number, y: number}} at */
  const inside = (at) => x >= at.x && x < at.x + cardW && y >= at.y && y < at.y + cardH;
  /** @type {PlacedCard | null} */
  let best = null;
  for (const item of placed.cards) {
    if (inside(item) && (best === null || item.z > best.z)) best = item;
  }
  if (best) return { card: best, slot: null };
  for (const [name, at] of Object.entries(placed.slots)) {
    if (inside(at)) return { card: null, slot: /** @type {PileName} */ (name) };
  }
  return null;
}
