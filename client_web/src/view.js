// @ts-check
/**
 * Board views and diffs of protocol section 3, as plain immutable values.
 *
 * A view is `{tableau: [[faceDown, [card...]] x7], waste, stock, foundations,
 * foundations_hidden, pass}`; each tableau pile lists all its cards bottom to top, the
 * first `faceDown` of them face down (-1 when unknown). Functions here never mutate their arguments, so a
 * renderer can compare old and new views by identity, pile by pile.
 */

/** @import { Card } from "./cards.js" */

/**
 * A tableau pile: how many of its cards lie face down, and all its cards bottom to top.
 * @typedef {[faceDown: number, cards: Card[]]} Pile
 */

/**
 * One board as one audience may see it (protocol section 3).
 * @typedef {object} View
 * @property {Pile[]} tableau the seven piles
 * @property {Card[]} waste bottom to top; the last is playable
 * @property {number} stock how many cards the stock holds
 * @property {number[]} foundations the highest rank on each suit's foundation (0 = empty)
 * @property {number} [foundations_hidden] more foundation cards this audience may not know
 * @property {number} pass the current pass through the stock, from 1
 */

/**
 * A pile's change in a diff: keep its first `keep` cards, append `cards`, and (tableau
 * piles) set its face-down count. Pile 0..6 is a column, 7 the waste.
 * @typedef {[pile: number, keep: number, faceDown: number, cards: Card[]]} PileChange
 */

/**
 * What turns a view into the next one of the same board; scalars only when changed.
 * @typedef {object} Diff
 * @property {PileChange[]} [piles]
 * @property {number} [stock]
 * @property {number[]} [foundations]
 * @property {number} [foundations_hidden]
 * @property {number} [pass]
 */

export const WASTE_PILE = 7;

/**
 * An empty-looking view, for a board whose snapshot has not arrived yet.
 * @returns {View}
 */
export function emptyView() {
  return {
    tableau: Array.from({ length: 7 }, () => [0, []]),
    waste: [],
    stock: 0,
    foundations: [0, 0, 0, 0],
    foundations_hidden: 0,
    pass: 1,
  };
}

/**
 * The view after a diff: kept prefixes, appended cards, and changed scalars.
 * @param {View} view
 * @param {Diff} diff
 * @returns {View}
 */
export function applyDiff(view, diff) {
  const tableau = view.tableau.slice();
  let waste = view.waste;
  for (const [pile, keep, faceDown, cards] of diff.piles ?? []) {
    if (pile === WASTE_PILE) {
      waste = view.waste.slice(0, keep).concat(cards);
    } else {
      // A pile lists all its cards, bottom to top; the first `faceDown` lie face down.
      tableau[pile] = [faceDown, view.tableau[pile][1].slice(0, keep).concat(cards)];
    }
  }
  return {
    tableau,
    waste,
    stock: diff.stock ?? view.stock,
    foundations: diff.foundations ?? view.foundations,
    foundations_hidden: diff.foundations_hidden ?? view.foundations_hidden,
    pass: diff.pass ?? view.pass,
  };
}

/**
 * Cards on the foundations, named or not.
 * @param {View} view
 */
export function foundationCount(view) {
  return view.foundations.reduce((a, b) => a + b, 0) + (view.foundations_hidden ?? 0);
}

/**
 * Face-down cards left in the tableau.
 * @param {View} view
 */
export function faceDownCount(view) {
  return view.tableau.reduce((sum, [faceDown]) => sum + faceDown, 0);
}

/**
 * The top card of a tableau pile, or null when it is empty.
 * @param {View} view
 * @param {number} pile
 * @returns {Card | null}
 */
export function topOf(view, pile) {
  const [, cards] = view.tableau[pile];
  return cards.length ? cards[cards.length - 1] : null;
}

/**
 * The face-up cards of a tableau pile, bottom to top.
 * @param {View} view
 * @param {number} pile
 */
export function faceUp(view, pile) {
  const [faceDown, cards] = view.tableau[pile];
  return cards.slice(faceDown);
}

/**
 * True when the view shows all 52 cards on the foundations.
 * @param {View} view
 */
export function isComplete(view) {
  return foundationCount(view) === 52;
}

/**
 * Whether a view keeps from its audience cards that the board's player has seen: a
 * card face up but unknown (`-1`), or foundation cards it may not know (a spectator's
 * view of a race, protocol section 3).
 * @param {View} view
 */
export function hidesSeenCards(view) {
  if ((view.foundations_hidden ?? 0) > 0 || view.waste.some((card) => card < 0)) return true;
  return view.tableau.some(([faceDown, cards]) => cards.slice(faceDown).some((card) => card < 0));
}
