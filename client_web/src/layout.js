// @ts-check
/**
 * Where every card of a board goes, as a pure function of the view and the space.
 *
 * Cards are placed absolutely so that a card keeps its element (keyed by identity)
 * wherever it moves, which is what lets the renderer animate moves with plain CSS
 * transitions. Unknown cards are keyed by their place instead.
 */

import { UNKNOWN } from "./cards.js";

/** @import { Card } from "./cards.js" */
/** @import { View } from "./view.js" */

/**
 * A pile's name on screen: "stock", "waste", "f0".."f3" (by suit) or "t0".."t6".
 * @typedef {"stock" | "waste" | `f${number}` | `t${number}`} PileName
 */

/**
 * Card size, the gap between piles and the board's side margin, in pixels.
 * @typedef {{gap: number, cardW: number, cardH: number, margin: number}} Metrics
 */

/** @typedef {{x: number, y: number}} Point */

/**
 * One card where it goes. `key` names its element: `c<card>` for a known card, else
 * its place (`s<k>` in the stock, `w<k>` in the waste, `t<i>:<k>` in column i).
 * @typedef {object} PlacedCard
 * @property {string} key
 * @property {Card} card
 * @property {boolean} up drawn face up
 * @property {boolean} [revealed] face down in the game, shown after it
 * @property {number} x
 * @property {number} y
 * @property {number} z
 * @property {PileName} place
 * @property {number} index the card's position in its pile
 */

/** @typedef {Record<PileName, Point>} Slots */

/**
 * A laid-out board: every card, every pile's slot, the size it takes, and its metrics.
 * @typedef {{cards: PlacedCard[], slots: Slots, width: number, height: number, metrics: Metrics}} Placed
 */

const MAX_CARD_WIDTH = 116;
const ASPECT = 1.4;

const MIN_CARD_WIDTH = 28;
const MIN_DOWN = 0.05;
const MIN_UP = 0.15;

/**
 * Card size and gaps for a board `width` pixels wide (cards at most `maxCard` wide).
 * @param {number} width
 * @returns {Metrics}
 */
export function metrics(width, maxCard = MAX_CARD_WIDTH) {
  const gap = Math.max(4, Math.min(14, width * 0.012));
  const cardW = Math.max(MIN_CARD_WIDTH, Math.min(maxCard, (width - gap * 8) / 7));
  const cardH = Math.round(cardW * ASPECT);
  const margin = (width - cardW * 7 - gap * 6) / 2;
  return { gap, cardW: Math.round(cardW), cardH, margin };
}

/**
 * The x of column `i` (0..6).
 * @param {Metrics} m
 * @param {number} i
 */
function columnX(m, i) {
  return Math.round(m.margin + i * (m.cardW + m.gap));
}

/**
 * Vertical spacing of a column: face-down and face-up offsets, squeezed so that the
 * longest column fits in `avail` pixels when it is given.
 * @param {Metrics} m
 * @param {number} faceDown
 * @param {number} faceUp
 * @param {number} avail 0 for no limit
 */
export function fanOffsets(m, faceDown, faceUp, avail) {
  let down = m.cardH * 0.13;
  let up = m.cardH * 0.28;
  const need = () => down * faceDown + up * Math.max(0, faceUp - 1) + m.cardH;
  if (avail && need() > avail) {
    const room = avail - m.cardH;
    const ups = Math.max(0, faceUp - 1);
    const scale = room / (down * faceDown + up * ups);
    up = Math.max(m.cardH * MIN_UP, up * scale);
    if (faceDown) down = Math.max(m.cardH * MIN_DOWN, Math.min(down, (room - up * ups) / faceDown));
    if (need() > avail && ups) up = Math.max(m.cardH * MIN_UP, (room - down * faceDown) / ups);
  }
  return { down, up };
}

/**
 * The height the tallest column needs with its fan squeezed as far as it goes.
 * @param {View} view
 * @param {Metrics} m
 */
function squeezedHeight(view, m) {
  let tallest = 0;
  for (const [faceDown, pile] of view.tableau) {
    const up = Math.max(0, pile.length - faceDown - 1);
    tallest = Math.max(tallest, m.cardH * (1 + MIN_DOWN * faceDown + MIN_UP * up));
  }
  return m.gap * 4 + m.cardH + tallest;
}

/**
 * Metrics for the width, with smaller cards when the columns would not fit `height`.
 * @param {View} view
 * @param {number} width
 * @param {number} height 0 for no limit
 */
function fitMetrics(view, width, height) {
  let m = metrics(width);
  while (height && m.cardW > MIN_CARD_WIDTH && squeezedHeight(view, m) > height) {
    m = metrics(width, m.cardW * 0.92);
  }
  return m;
}

/**
 * Placed cards and slots for a view, `width` pixels wide and, when `height` is given,
 * squeezed to fit it; `reveal` shows face-down cards (after a race).
 * @param {View} view
 * @param {{width: number, height?: number, draw?: number, reveal?: boolean}} space
 * @returns {Placed}
 */
export function layout(view, { width, height = 0, draw = 1, reveal = false }) {
  const m = fitMetrics(view, width, height);
  const { gap, cardW, cardH } = m;
  /** @type {PlacedCard[]} */
  const cards = [];
  const top = gap;
  const rowY = top + cardH + gap * 2;
  /** @type {Slots} */
  const slots = { stock: { x: columnX(m, 0), y: top }, waste: { x: columnX(m, 1), y: top } };
  for (let s = 0; s < 4; s += 1) slots[`f${s}`] = { x: columnX(m, 3 + s), y: top };
  for (let i = 0; i < 7; i += 1) slots[`t${i}`] = { x: columnX(m, i), y: rowY };

  const shown = Math.min(view.stock, 3);
  for (let k = 0; k < shown; k += 1) {
    cards.push({
      key: `s${k}`,
      card: UNKNOWN,
      up: false,
      x: slots.stock.x + k * 2,
      y: top - k * 2,
      z: k,
      place: "stock",
      index: k,
    });
  }

  // Draw-3 fans the last three waste cards; draw-1 stacks them.
  const fan = draw === 3 ? Math.round(cardW * 0.24) : 0;
  const waste = view.waste;
  waste.forEach((card, index) => {
    const fromTop = waste.length - 1 - index;
    const step = fromTop < 3 ? 2 - fromTop - Math.max(0, 3 - waste.length) : 0;
    cards.push({
      key: card === UNKNOWN ? `w${index}` : `c${card}`,
      card,
      up: card !== UNKNOWN,
      x: slots.waste.x + Math.max(0, step) * fan,
      y: top,
      z: 10 + index,
      place: "waste",
      index,
    });
  });

  view.foundations.forEach((highest, suit) => {
    for (let rank = 1; rank <= highest; rank += 1) {
      const card = suit * 13 + rank - 1;
      cards.push({
        key: `c${card}`,
        card,
        up: true,
        x: slots[`f${suit}`].x,
        y: top,
        z: 100 + rank,
        place: `f${suit}`,
        index: rank - 1,
      });
    }
  });

  const avail = height ? height - rowY - gap : 0;
  let bottom = rowY + cardH;
  view.tableau.forEach(([faceDown, pile], i) => {
    const { down, up } = fanOffsets(m, faceDown, pile.length - faceDown, avail);
    let y = rowY;
    let lastY = rowY;
    pile.forEach((card, index) => {
      const faceUp = index >= faceDown;
      // After a race, face-down cards are shown too (`reveal`), marked as such.
      const known = (faceUp || reveal) && card !== UNKNOWN;
      cards.push({
        key: known ? `c${card}` : `t${i}:${index}`,
        card: known ? card : UNKNOWN,
        up: known,
        revealed: known && !faceUp,
        x: slots[`t${i}`].x,
        y: Math.round(y),
        z: 200 + index,
        place: `t${i}`,
        index,
      });
      lastY = Math.round(y);
      y += faceUp ? up : down;
    });
    bottom = Math.max(bottom, lastY + cardH);
  });
  return { cards, slots, width, height: Math.round(bottom + gap), metrics: m };
}
