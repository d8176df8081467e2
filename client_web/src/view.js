/**
 * Board views and diffs of protocol section 3, as plain immutable values.
 *
 * A view is `{tableau: [[faceDown, [card...]] x7], waste, stock, foundations,
 * foundations_hidden, pass}`; each tableau pile lists all its cards bottom to top, the
 * first `faceDown` of them face down (-1 when unknown). Functions here never mutate their arguments, so a
 * renderer can compare old and new views by identity, pile by pile.
 */

export const WASTE_PILE = 7;

/** An empty-looking view, for a board whose snapshot has not arrived yet. */
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

/** The view after a diff: kept prefixes, appended cards, and changed scalars. */
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

/** Cards on the foundations, named or not. */
export function foundationCount(view) {
  return view.foundations.reduce((a, b) => a + b, 0) + (view.foundations_hidden ?? 0);
}

/** Face-down cards left in the tableau. */
export function faceDownCount(view) {
  return view.tableau.reduce((sum, [faceDown]) => sum + faceDown, 0);
}

/** The top card of a tableau pile, or null when it is empty. */
export function topOf(view, pile) {
  const [, cards] = view.tableau[pile];
  return cards.length ? cards[cards.length - 1] : null;
}

/** The face-up cards of a tableau pile, bottom to top. */
export function faceUp(view, pile) {
  const [faceDown, cards] = view.tableau[pile];
  return cards.slice(faceDown);
}

/** True when the view shows all 52 cards on the foundations. */
export function isComplete(view) {
  return foundationCount(view) === 52;
}
