// @ts-check
/**
 * Cards as the protocol sends them: integers 0..51 (suit × 13 + rank − 1, suits clubs,
 * diamonds, hearts, spades), and -1 for a card this viewer may not know.
 *
 * Pure helpers for names, colours and notation; nothing here touches the DOM. Spoken
 * names come from the catalog (`cards.*`, i18n.js).
 */

import { t } from "./i18n.js";

/**
 * A card: 0..51, or UNKNOWN (-1).
 * @typedef {number} Card
 */

export const UNKNOWN = -1;
export const SUITS = ["C", "D", "H", "S"];
export const SUIT_SYMBOLS = ["♣", "♦", "♥", "♠"];
export const SUIT_NAMES = ["clubs", "diamonds", "hearts", "spades"];
export const RANK_TEXT = ["", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];

/**
 * Suit index 0..3 of a known card.
 * @param {Card} card
 */
export function suitOf(card) {
  return Math.floor(card / 13);
}

/**
 * Rank 1 (ace) .. 13 (king) of a known card.
 * @param {Card} card
 */
export function rankOf(card) {
  return (card % 13) + 1;
}

/**
 * The card of a suit and rank.
 * @param {number} suit 0..3
 * @param {number} rank 1..13
 * @returns {Card}
 */
export function cardOf(suit, rank) {
  return suit * 13 + rank - 1;
}

/**
 * True for diamonds and hearts.
 * @param {Card} card
 */
export function isRed(card) {
  const suit = suitOf(card);
  return suit === 1 || suit === 2;
}

/**
 * Spoken name in the active language: "Queen of hearts" ("Bihotzetako erregina"), or
 * "face-down card" for an unknown card.
 * @param {Card} card
 */
export function cardName(card) {
  if (card === UNKNOWN) return t("cards.faceDown");
  return t("cards.name", {
    rank: t(`cards.rank.${rankOf(card)}`),
    suit: t(`cards.suitOf.${SUIT_NAMES[suitOf(card)]}`),
  });
}

/**
 * A suit's name alone, in the active language: "hearts".
 * @param {number} suit 0..3
 */
export function suitName(suit) {
  return t(`cards.suit.${SUIT_NAMES[suit]}`);
}

/**
 * Short label for the corner of a card: "10♥".
 * @param {Card} card
 */
export function cardLabel(card) {
  return `${RANK_TEXT[rankOf(card)]}${SUIT_SYMBOLS[suitOf(card)]}`;
}
