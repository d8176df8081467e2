// @ts-check
/**
 * Just enough of the rules for instant feedback: which drops to offer, and how a move
 * the player just made will probably look before the server confirms it.
 *
 * The server is the only judge. A prediction shows a card face up only when this
 * viewer already knows it; a card a move uncovers stays unknown (-1) until the
 * server's answer names it.
 */

import { UNKNOWN, isRed, rankOf, suitOf, SUITS } from "./cards.js";
import { t } from "./i18n.js";
import { topOf } from "./view.js";

/** @import { Card } from "./cards.js" */
/** @import { View } from "./view.js" */

/**
 * A variant's rules: cards turned per draw, passes through the stock (null: unlimited),
 * and whether foundation cards may come back to the tableau.
 * @typedef {object} Variant
 * @property {number} draw 1 or 3
 * @property {number | null} passes
 * @property {boolean} f2t
 */

/**
 * A place cards come from: a column (`size` cards from its top, one when absent), the
 * waste's top card, a foundation's top card, or the stock.
 * @typedef {{kind: "tableau", index: number, size?: number}
 *   | {kind: "waste"}
 *   | {kind: "foundation", suit: number}
 *   | {kind: "stock"}} Source
 */

/**
 * A place cards go to: a column, or a foundation (whichever fits when `suit` is absent).
 * @typedef {{kind: "tableau", index: number} | {kind: "foundation", suit?: number}} Target
 */

/**
 * Any place of a board: where cards come from or go to.
 * @typedef {Source | Target} Place
 */

/**
 * A move token's parts: a turn of the stock (`D`), a turn of the waste (`R`), or a move.
 * @typedef {{kind: "D"} | {kind: "R"} | {kind: "move", from: Source, to: Target}} ParsedToken
 */

/**
 * True when `card` may go on a tableau pile whose top is `top` (null when empty).
 * @param {Card} card
 * @param {Card | null} top
 */
export function fitsTableau(card, top) {
  if (card === UNKNOWN) return false;
  if (top === null) return rankOf(card) === 13;
  if (top === UNKNOWN) return false;
  return rankOf(card) === rankOf(top) - 1 && isRed(card) !== isRed(top);
}

/**
 * True when `card` is the next card of its suit's foundation.
 * @param {Card} card
 * @param {number[]} foundations
 */
export function fitsFoundation(card, foundations) {
  if (card === UNKNOWN) return false;
  return rankOf(card) === foundations[suitOf(card)] + 1;
}

/**
 * How many passes remain after this one (Infinity when unlimited).
 * @param {View} view
 * @param {Variant} variant
 */
export function passesLeft(view, variant) {
  return variant.passes === null ? Infinity : variant.passes - view.pass;
}

/**
 * Parse variant text (`draw=3 passes=3 f2t=no`) into {draw, passes, f2t}.
 * @param {string} text
 * @returns {Variant}
 */
export function parseVariant(text) {
  const fields = Object.fromEntries(
    String(text)
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((part) => part.split("=")),
  );
  const draw = fields.draw === "3" ? 3 : 1;
  /** @type {number | null} */
  let passes = draw === 3 ? 3 : 1;
  if (fields.passes === "unlimited") passes = null;
  else if (fields.passes) passes = Number(fields.passes);
  return { draw, passes, f2t: fields.f2t === "yes" };
}

/**
 * Variant text of the notation from its parts.
 * @param {{draw: number, passes: number | null, f2t?: boolean}} variant
 */
export function variantText({ draw, passes, f2t = false }) {
  return `draw=${draw} passes=${passes === null ? "unlimited" : passes} f2t=${f2t ? "yes" : "no"}`;
}

/**
 * Words for a variant in the active language (`variants.*`): "Draw 3 · 3 passes",
 * "Draw 1 · 1 pass · cards back from foundations" (the optional variant, `f2t`).
 * @param {Variant} variant
 */
export function describeVariant(variant) {
  const key = `variants.${variant.passes === null ? "unlimited" : "limited"}${variant.f2t ? "F2t" : ""}`;
  return t(key, { draw: variant.draw, passes: variant.passes ?? 0 });
}

/**
 * The notation token moving cards from `from` to `to`, or null when none exists.
 * @param {Source} from
 * @param {Place} to
 * @returns {string | null}
 */
export function moveToken(from, to) {
  if (from.kind === "stock") return "D";
  const dst = to.kind === "foundation" ? "F" : to.kind === "tableau" ? String(to.index + 1) : null;
  if (dst === null) return null;
  if (from.kind === "waste") return `W${dst}`;
  if (from.kind === "foundation") return to.kind === "tableau" ? `F${SUITS[from.suit]}${dst}` : null;
  if (from.kind === "tableau") {
    if (to.kind === "tableau" && to.index === from.index) return null;
    const size = from.size ?? 1;
    if (dst === "F") return size === 1 ? `${from.index + 1}F` : null;
    return size > 1 ? `${from.index + 1}${dst}:${size}` : `${from.index + 1}${dst}`;
  }
  return null;
}

/**
 * The parts of a move token, or null when it is not a token.
 * @param {string} token
 * @returns {ParsedToken | null}
 */
export function parseToken(token) {
  if (token === "D" || token === "R") return { kind: token };
  let match = /^W([1-7F])$/.exec(token);
  if (match) return { kind: "move", from: { kind: "waste" }, to: place(match[1]) };
  match = /^F([CDHS])([1-7])$/.exec(token);
  if (match) {
    return {
      kind: "move",
      from: { kind: "foundation", suit: SUITS.indexOf(match[1]) },
      to: place(match[2]),
    };
  }
  match = /^([1-7])([1-7F])(?::(\d+))?$/.exec(token);
  if (match && match[1] !== match[2]) {
    /** @type {Source} */
    const from = { kind: "tableau", index: Number(match[1]) - 1 };
    if (match[3] !== undefined) from.size = Number(match[3]);
    return { kind: "move", from, to: place(match[2]) };
  }
  return null;
}

/**
 * @param {string} char a destination of a token: `F` or `1`..`7`
 * @returns {Target}
 */
function place(char) {
  return char === "F" ? { kind: "foundation" } : { kind: "tableau", index: Number(char) - 1 };
}

/**
 * The cards a place would give up (bottom first), or null when it has none to give.
 * @param {View} view
 * @param {Source} from
 * @returns {Card[] | null}
 */
export function cardsAt(view, from) {
  if (from.kind === "waste") return view.waste.length ? [view.waste[view.waste.length - 1]] : null;
  if (from.kind === "foundation") {
    const rank = view.foundations[from.suit];
    return rank ? [from.suit * 13 + rank - 1] : null;
  }
  if (from.kind === "tableau") {
    const [faceDown, cards] = view.tableau[from.index];
    const size = from.size ?? 1;
    if (size < 1 || size > cards.length - faceDown) return null;
    return cards.slice(cards.length - size);
  }
  return null;
}

/**
 * The run size of pile `index` whose first card fits on `to`, or 0 when none does.
 * @param {View} view
 * @param {number} index
 * @param {Target} to
 */
export function fittingRun(view, index, to) {
  const [faceDown, cards] = view.tableau[index];
  for (let size = cards.length - faceDown; size >= 1; size -= 1) {
    const first = cards[cards.length - size];
    if (
      to.kind === "foundation"
        ? size === 1 && fitsFoundation(first, view.foundations)
        : fitsTableau(first, topOf(view, to.index))
    ) {
      return size;
    }
  }
  return 0;
}

/**
 * The cards a move token picks up, bottom first (for `53`, the run of column 5 whose
 * first card fits on column 3, as the server reads it), or null when this view cannot
 * tell (a turn of the stock or waste, unknown cards, no fitting run).
 * @param {View} view
 * @param {string} token
 * @returns {Card[] | null}
 */
export function movingCards(view, token) {
  const parsed = parseToken(token);
  if (!parsed || parsed.kind !== "move") return null;
  let { from } = parsed;
  if (from.kind === "tableau" && from.size === undefined) {
    const size = fittingRun(view, from.index, parsed.to) || 1;
    from = { ...from, size };
  }
  const cards = cardsAt(view, from);
  return cards && !cards.includes(UNKNOWN) ? cards : null;
}

/**
 * True when moving the cards of `from` to `to` looks legal from what this view shows.
 * @param {View} view
 * @param {Source} from
 * @param {Place} to
 */
export function canMove(view, from, to) {
  const cards = cardsAt(view, from);
  if (!cards || cards.includes(UNKNOWN)) return false;
  if (to.kind === "foundation")
    return cards.length === 1 && from.kind !== "foundation" && fitsFoundation(cards[0], view.foundations);
  if (to.kind === "tableau") {
    if (from.kind === "tableau" && from.index === to.index) return false;
    return fitsTableau(cards[0], topOf(view, to.index));
  }
  return false;
}

/**
 * The view a move token will probably lead to, or null when this view cannot tell
 * (a turn of the stock shows cards only the server knows) or the move looks illegal.
 * @param {View} view
 * @param {string} token
 * @param {Variant} variant
 * @returns {View | null}
 */
export function predict(view, token, variant) {
  const parsed = parseToken(token);
  if (!parsed || parsed.kind === "D") return null;
  if (parsed.kind === "R") {
    if (view.stock || !view.waste.length || passesLeft(view, variant) <= 0) return null;
    return { ...view, stock: view.waste.length, waste: [], pass: view.pass + 1 };
  }
  let { from } = parsed;
  const { to } = parsed;
  if (from.kind === "foundation" && !variant.f2t) return null;
  if (from.kind === "tableau" && from.size === undefined) {
    const size = fittingRun(view, from.index, to);
    if (!size) return null;
    from = { ...from, size };
  }
  const cards = canMove(view, from, to) ? cardsAt(view, from) : null;
  if (!cards) return null;
  const tableau = view.tableau.slice();
  let { waste, foundations } = view;
  if (from.kind === "waste") waste = waste.slice(0, -1);
  else if (from.kind === "foundation") {
    foundations = foundations.slice();
    foundations[from.suit] -= 1;
  } else if (from.kind === "tableau") {
    const [faceDown, pile] = tableau[from.index];
    const rest = pile.slice(0, pile.length - cards.length);
    // The card a move uncovers turns face up; only the server can name it.
    const down = rest.length && faceDown >= rest.length ? rest.length - 1 : faceDown;
    tableau[from.index] = [down, rest];
  }
  if (to.kind === "foundation") {
    foundations = foundations.slice();
    foundations[suitOf(cards[0])] += 1;
  } else {
    const [faceDown, pile] = tableau[to.index];
    tableau[to.index] = [faceDown, pile.concat(cards)];
  }
  return { ...view, tableau, waste, foundations };
}

/**
 * Where a card would go with a double click: its foundation's move token, or null.
 * @param {View} view
 * @param {Source} from
 */
export function foundationToken(view, from) {
  const one = from.kind === "tableau" ? { ...from, size: 1 } : from;
  const cards = cardsAt(view, one);
  if (!cards || !fitsFoundation(cards[0], view.foundations)) return null;
  return moveToken(one, { kind: "foundation" });
}

/**
 * True when every card is face up and the stock and waste are empty: the game is won.
 * @param {View} view
 */
export function isTriviallyWon(view) {
  return view.stock === 0 && view.waste.length === 0 && view.tableau.every(([faceDown]) => faceDown === 0);
}

/**
 * The next foundation move of an auto-completion: the lowest top card that fits.
 * @param {View} view
 * @returns {string | null}
 */
export function autoCompleteToken(view) {
  /** @type {{card: Card, index: number} | null} */
  let best = null;
  for (const [index, [, cards]] of view.tableau.entries()) {
    const card = cards[cards.length - 1];
    if (card === undefined || !fitsFoundation(card, view.foundations)) continue;
    if (best === null || card % 13 < best.card % 13) best = { card, index };
  }
  return best === null ? null : `${best.index + 1}F`;
}

/**
 * True when `card` can go home with no later need for it on the tableau: aces and
 * twos always; else when both foundations of the other colour reach one rank below it
 * (no card left could be built on it). With foundation-to-tableau moves on, any card
 * is safe: it can come back.
 * @param {Card} card
 * @param {number[]} foundations
 * @param {Variant} variant
 */
export function isSafeHome(card, foundations, variant) {
  const rank = rankOf(card);
  if (rank <= 2 || variant.f2t) return true;
  const others = isRed(card) ? [0, 3] : [1, 2];
  return others.every((suit) => foundations[suit] >= rank - 1);
}

/**
 * One-click moves: the move token that sends the cards of `from` to their best legal
 * place, or null when there is none. A single card goes home first when that is safe
 * (`isSafeHome`); otherwise onto a column (a card to build on before an empty column,
 * left to right; never a king already at the bottom of its column to another empty
 * one); otherwise home all the same. A foundation card (with `f2t`) goes onto a column.
 * @param {View} view
 * @param {Source} from
 * @param {Variant} variant
 * @returns {string | null}
 */
export function autoMoveToken(view, from, variant) {
  const cards = cardsAt(view, from);
  if (!cards || cards.includes(UNKNOWN) || from.kind === "stock") return null;
  if (from.kind === "foundation" && !variant.f2t) return null;
  const card = cards[0];
  const home = cards.length === 1 && from.kind !== "foundation" && fitsFoundation(card, view.foundations);
  if (home && isSafeHome(card, view.foundations, variant)) return moveToken(from, { kind: "foundation" });
  const wholeColumn =
    from.kind === "tableau" &&
    view.tableau[from.index][0] === 0 &&
    cards.length === view.tableau[from.index][1].length;
  /** @type {number | null} */
  let empty = null;
  for (let index = 0; index < 7; index += 1) {
    if (from.kind === "tableau" && from.index === index) continue;
    const top = topOf(view, index);
    if (top === null) {
      if (empty === null && rankOf(card) === 13 && !wholeColumn) empty = index;
    } else if (fitsTableau(card, top)) {
      return moveToken(from, { kind: "tableau", index });
    }
  }
  if (empty !== null) return moveToken(from, { kind: "tableau", index: empty });
  return home ? moveToken(from, { kind: "foundation" }) : null;
}

/**
 * True when the rest of the game is forced and this view alone can tell: every tableau
 * card is face up, and the stock and waste are empty, or turned one card at a time with
 * unlimited passes. Then the lowest card a foundation needs is always on top of a
 * column (the cards on it in a built run are lower still, so already home) or will come
 * up from the stock, and moving cards home wins.
 * @param {View} view
 * @param {Variant} variant
 */
export function isForced(view, variant) {
  const allUp = view.tableau.every(([faceDown, cards]) => faceDown === 0 && !cards.includes(UNKNOWN));
  if (!allUp) return false;
  return (view.stock === 0 && view.waste.length === 0) || (variant.draw === 1 && variant.passes === null);
}

/**
 * The next move of an auto-completion that may use the stock: the lowest card that
 * fits its foundation (column tops and the waste's top), else a turn of the stock, else
 * a turn of the waste when passes are left; null when none is possible.
 * @param {View} view
 * @param {Variant} variant
 * @returns {string | null}
 */
export function finishToken(view, variant) {
  const fromTableau = autoCompleteToken(view);
  const top = view.waste[view.waste.length - 1];
  const wasteFits = top !== undefined && fitsFoundation(top, view.foundations);
  if (fromTableau) {
    const card = topOf(view, Number(fromTableau[0]) - 1);
    if (!wasteFits || (card !== null && card % 13 <= top % 13)) return fromTableau;
  }
  if (wasteFits) return "WF";
  if (view.stock > 0) return "D";
  if (view.waste.length && passesLeft(view, variant) > 0) return "R";
  return null;
}
