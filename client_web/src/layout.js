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
/** Room under the top row for the stock count (style.css `.stock-count`), in pixels. */
const UNDER_TOP_ROW = 20;
/** A portrait board's face-up cards may fan out this far (of a card's height) to fill it. */
const MAX_UP = 0.42;
/** and its face-down cards this far. */
const MAX_DOWN = 0.2;

/**
 * The font size of a card's corner index, in pixels: style.css `.card .corner` says
 * `max(10px, calc(var(--cw) * 0.21))`, and the fans below are measured from it.
 * @param {number} cardW
 */
export function indexFont(cardW) {
  return Math.max(10, cardW * 0.21);
}

/**
 * How far down from a card's top its index (rank and suit) reaches: the least a card
 * lying on it may be offset, so that the index stays readable. The index sits at 5% of
 * the height; its glyphs (the suit may come from a fallback font) take about 1.17 em.
 * @param {Metrics} m
 */
export function indexDepth(m) {
  return Math.ceil(m.cardH * 0.05 + indexFont(m.cardW) * 1.25 + 2);
}

/**
 * How far right from a card's left edge its index reaches ("10♥", the widest, is about
 * 2.05 em in bold with the index's tight letter spacing): the least a draw-3 waste card
 * may be fanned from the one under it.
 * @param {Metrics} m
 */
export function indexWidth(m) {
  return Math.ceil(m.cardW * 0.05 + indexFont(m.cardW) * 2.1 + 1);
}

/**
 * Card size and gaps for a board `width` pixels wide (cards at most `maxCard` wide).
 * @param {number} width
 * @returns {Metrics}
 */
export function metrics(width, maxCard = MAX_CARD_WIDTH) {
  // Narrow (phone) boards give the cards every pixel they can.
  const gap = width < 480 ? 3 : Math.max(4, Math.min(14, width * 0.012));
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
 * longest column fits in `avail` pixels when it is given, but never so far that a
 * face-up card hides the index of the one under it. `fill` lets face-up cards fan out
 * (up to MAX_UP of a card) to use the room a tall board has.
 * @param {Metrics} m
 * @param {number} faceDown
 * @param {number} faceUp
 * @param {number} avail 0 for no limit
 * @param {boolean} [fill]
 */
export function fanOffsets(m, faceDown, faceUp, avail, fill = false) {
  const minUp = indexDepth(m);
  let down = m.cardH * 0.13;
  let up = Math.max(minUp, m.cardH * 0.28);
  const ups = Math.max(0, faceUp - 1);
  const need = () => down * faceDown + up * ups + m.cardH;
  if (avail && need() > avail) {
    const room = avail - m.cardH;
    const scale = room / (down * faceDown + up * ups);
    up = Math.max(minUp, up * scale);
    if (faceDown) down = Math.max(m.cardH * MIN_DOWN, Math.min(down, (room - up * ups) / faceDown));
    if (need() > avail && ups) up = Math.max(minUp, (room - down * faceDown) / ups);
  } else if (avail && fill) {
    // Spread face-down cards a little (up to MAX_DOWN) and face-up ones more.
    if (faceDown)
      down = Math.max(down, Math.min(m.cardH * MAX_DOWN, (avail - m.cardH - up * ups) / faceDown));
    if (ups) up = Math.max(up, Math.min(m.cardH * MAX_UP, (avail - m.cardH - down * faceDown) / ups));
  }
  return { down, up };
}

/**
 * The height the tallest column needs with its fan squeezed as far as it goes; with
 * `reveal`, face-down cards are shown and fan like face-up ones.
 * @param {View} view
 * @param {Metrics} m
 * @param {boolean} reveal
 */
function squeezedHeight(view, m, reveal) {
  const minUp = indexDepth(m);
  let tallest = 0;
  for (const [faceDown, pile] of view.tableau) {
    const down = reveal ? 0 : faceDown;
    const up = Math.max(0, pile.length - down - 1);
    tallest = Math.max(tallest, m.cardH * (1 + MIN_DOWN * down) + minUp * up);
  }
  return topRowHeight(m) + tallest + m.gap;
}

/**
 * From the board's top to its columns' top: the top row, and room for the stock count.
 * @param {Metrics} m
 */
function topRowHeight(m) {
  return m.gap + m.cardH + Math.max(m.gap * 2, UNDER_TOP_ROW);
}

/**
 * Metrics for the width, with smaller cards when the columns would not fit `height`.
 * @param {View} view
 * @param {number} width
 * @param {number} height 0 for no limit
 * @param {boolean} reveal
 */
function fitMetrics(view, width, height, reveal) {
  let m = metrics(width);
  while (height && m.cardW > MIN_CARD_WIDTH && squeezedHeight(view, m, reveal) > height) {
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
  const m = fitMetrics(view, width, height, reveal);
  const { gap, cardW, cardH } = m;
  /** @type {PlacedCard[]} */
  const cards = [];
  const top = gap;
  const rowY = topRowHeight(m);
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

  // Draw-3 fans the last three waste cards, each showing its whole index, into the
  // free space before the foundations; draw-1 stacks them.
  const fan = draw === 3 ? Math.min(indexWidth(m), Math.floor((cardW + gap * 2) / 2)) : 0;
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
  // A portrait board (a phone) fans its columns out over the whole height.
  const fill = height > width * 1.2;
  let bottom = rowY + cardH;
  view.tableau.forEach(([faceDown, pile], i) => {
    // Revealed face-down cards (after a race) fan like face-up ones: their index shows.
    const shown = reveal ? 0 : faceDown;
    const { down, up } = fanOffsets(m, shown, pile.length - shown, avail, fill);
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
      y += faceUp || reveal ? up : down;
    });
    bottom = Math.max(bottom, lastY + cardH);
  });
  const used = Math.round(bottom + gap);
  return { cards, slots, width, height: fill ? Math.max(used, Math.round(height)) : used, metrics: m };
}
