// @ts-check
/**
 * A solver's winning line played out on a full-information replay view, for the
 * replay's ghost cards: the position after each move of the line, the cards the line
 * has moved or turned face up so far, and a sentence per move.
 *
 * A view gives the stock only as a count; its order comes from the game's deal text
 * (notation section 3), which the replay of a finished game carries. Cards only ever
 * leave the stock and waste, and `R` turns the waste back in its order, so the cards
 * still in the stock and waste are always the deal's stock order with the gone cards
 * left out: the waste (bottom first) then the stock (top first).
 */

import { cardLabel, rankOf, SUITS, suitOf } from "./cards.js";
import { t } from "./i18n.js";
import { movingCards, parseToken, predict } from "./rules.js";
import { topOf } from "./view.js";

/** @import { Card } from "./cards.js" */
/** @import { Variant } from "./rules.js" */
/** @import { View } from "./view.js" */

/**
 * One position of a line: after `k` of its moves (k = 0 is where it starts).
 * @typedef {object} LineStep
 * @property {number} k
 * @property {View} view
 * @property {Card[]} stock the stock's cards, top first
 * @property {string | null} token the move that led here (null at k = 0)
 * @property {string} text words for that move, e.g. "7♥ onto 8♣"
 * @property {Set<Card>} ghosts cards the line has moved or turned face up so far
 */

const RANKS = "A23456789TJQK";

/**
 * A card of the notation (`TH`, `10h`, `AS`), or null.
 * @param {string} text
 * @returns {Card | null}
 */
export function parseCard(text) {
  const match = /^(10|[2-9TJQKA])([CDHS])$/i.exec(text.trim());
  if (!match) return null;
  const rank = match[1] === "10" ? 9 : RANKS.indexOf(match[1].toUpperCase());
  return SUITS.indexOf(match[2].toUpperCase()) * 13 + rank;
}

/**
 * The stock of a deal text, top (the first card turned) first, or null when the text
 * has no valid stock line.
 * @param {string} deal
 * @returns {Card[] | null}
 */
export function dealStock(deal) {
  const line = deal.split("\n").find((l) => l.trim().startsWith("stock:"));
  if (!line) return null;
  const cards = line.trim().slice("stock:".length).trim().split(/\s+/).map(parseCard);
  if (cards.length !== 24 || cards.some((c) => c === null)) return null;
  return /** @type {Card[]} */ (cards);
}

/**
 * The stock of a full view, top first, from the deal's stock; null when the view does
 * not agree with that deal (its waste is not the order's prefix, a count differs).
 * @param {View} view
 * @param {Card[]} deal the deal's stock, top first
 * @returns {Card[] | null}
 */
export function stockAt(view, deal) {
  const gone = new Set();
  for (const [, cards] of view.tableau) for (const card of cards) gone.add(card);
  const left = deal.filter((card) => !gone.has(card) && rankOf(card) > view.foundations[suitOf(card)]);
  if (left.length !== view.waste.length + view.stock) return null;
  if (view.waste.some((card, i) => left[i] !== card)) return null;
  return left.slice(view.waste.length);
}

/**
 * Words for a move of a line from `view` (`replay.lineMove.*`): "7♥ onto 8♣", "K♠ to
 * empty column 3", "A♦ to its foundation", "turn the stock: 5♣", "turn the waste over".
 * @param {View} view the position before the move
 * @param {string} token
 * @param {Card[]} turned for `D`, the cards it turns
 */
export function describeLineMove(view, token, turned = []) {
  if (token === "D")
    return turned.length
      ? t("replay.lineMove.draw", { cards: turned.map(cardLabel).join(" ") })
      : t("replay.lineMove.drawNothing");
  if (token === "R") return t("replay.lineMove.recycle");
  const parsed = parseToken(token);
  const cards = movingCards(view, token);
  if (!parsed || parsed.kind !== "move" || !cards) return token;
  const first = cardLabel(cards[0]);
  const what = cards.length > 1 ? t("replay.lineMove.run", { card: first, n: cards.length }) : first;
  if (parsed.to.kind === "foundation") return t("replay.lineMove.foundation", { card: what });
  const top = topOf(view, parsed.to.index);
  return top === null
    ? t("replay.lineMove.empty", { card: what, column: parsed.to.index + 1 })
    : t("replay.lineMove.onto", { card: what, target: cardLabel(top) });
}

/**
 * The positions along `line` from a full view: steps[k] is after k moves. It stops
 * early at a move that does not apply (then fewer than `line.length + 1` steps).
 * @param {View} view a full view (every card known)
 * @param {Card[]} stock its stock, top first (`stockAt`)
 * @param {string[]} line move tokens
 * @param {Variant} variant
 * @returns {LineStep[]}
 */
export function playLine(view, stock, line, variant) {
  /** @type {LineStep[]} */
  const steps = [{ k: 0, view, stock, token: null, text: t("replay.lineMove.start"), ghosts: new Set() }];
  for (const token of line) {
    const before = steps[steps.length - 1];
    const ghosts = new Set(before.ghosts);
    /** @type {{view: View, stock: Card[], turned?: Card[]} | null} */
    let next = null;
    if (token === "D") {
      if (before.stock.length) {
        const turned = before.stock.slice(0, variant.draw);
        turned.forEach((card) => ghosts.add(card));
        next = {
          view: {
            ...before.view,
            waste: before.view.waste.concat(turned),
            stock: before.stock.length - turned.length,
          },
          stock: before.stock.slice(turned.length),
          turned,
        };
      }
    } else {
      const after = predict(before.view, token, variant);
      if (after) {
        const stockNext = token === "R" ? before.view.waste.slice() : before.stock;
        for (const card of movingCards(before.view, token) ?? []) ghosts.add(card);
        after.tableau.forEach(([faceDown, cards], i) => {
          // A card the move turned face up.
          if (faceDown < before.view.tableau[i][0]) ghosts.add(cards[faceDown]);
        });
        next = { view: after, stock: stockNext };
      }
    }
    if (!next) break;
    steps.push({
      k: steps.length,
      view: next.view,
      stock: next.stock,
      token,
      text: describeLineMove(before.view, token, next.turned),
      ghosts,
    });
  }
  return steps;
}
