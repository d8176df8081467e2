// @ts-check
/**
 * One board on screen: renders views with keyed card elements (moves and flips are
 * CSS transitions), and for the player's own board turns pointer and keyboard input
 * into the transitions of selection.js and the move tokens they offer. View-only
 * boards (opponents, spectators, replays) take no input.
 *
 * The board never sends anything: it calls `onMove(token)` and `onStock()`, and the
 * page decides. Every listener it adds is removed by `destroy()`.
 *
 * Its words (piles' and cards' accessible names) are the catalog's (`game.*`, `cards.*`):
 * a board draws them again by itself when the language changes (`relabel`).
 */

import { UNKNOWN, cardLabel, cardName, isRed, rankOf, RANK_TEXT, SUIT_SYMBOLS, SUIT_NAMES } from "./cards.js";
import { formatList, onLocaleChange, t } from "./i18n.js";
import { icon } from "./icons.js";
import { layout } from "./layout.js";
import { cardsAt, moveToken, passesLeft } from "./rules.js";
import {
  activate,
  canDropOn,
  dropOn,
  dropTarget,
  emptySelection,
  follow,
  isDrag,
  isPicked,
  pickUp,
  pieceAt,
  pressColumn,
  putDown,
  sourceAt,
  tap,
} from "./selection.js";

/** @import { Card } from "./cards.js" */
/** @import { PileName, Placed, PlacedCard } from "./layout.js" */
/** @import { Place, Source, Variant } from "./rules.js" */
/** @import { Outcome, Selection } from "./selection.js" */
/** @import { View } from "./view.js" */

/**
 * @typedef {object} BoardOptions
 * @property {Variant} variant
 * @property {boolean} [interactive] the player's own board: it takes input
 * @property {(token: string) => void} [onMove] a move the player made
 * @property {() => void} [onStock] a click on the stock
 * @property {string | (() => string)} [label] the board's accessible name (a function of
 *   the active language's words, to be named again on a language switch)
 * @property {boolean} [fitHeight] fit the window's height below the board's top
 */

/**
 * A hinted move: the pile and card it moves (by element key) and the pile it goes to.
 * @typedef {{source: PileName, key: string | null, target: PileName | null}} Hint
 */

/**
 * The cards a press on a card picked up, to drag: where they come from, where the
 * pointer holds the first one, and their elements with their places at the press.
 * @typedef {object} Grab
 * @property {Source} from
 * @property {number} grabX
 * @property {number} grabY
 * @property {number} cardW the cards' width when they were grabbed
 * @property {{node: HTMLElement, x: number, y: number}[]} nodes
 */

/**
 * A pointer press in progress: a tap, or a drag once it has moved.
 * @typedef {object} Press
 * @property {HTMLElement} node the card or slot pressed
 * @property {PileName} name its pile
 * @property {number} startX
 * @property {number} startY
 * @property {boolean} moved
 * @property {number} x the pointer's last position, from the board's left (a drag)
 * @property {number} y and top
 * @property {number} pointerId
 * @property {Grab | null} grab null when nothing can be dragged from there
 */

/** @type {PileName[]} */
const PILES = ["stock", "waste", "f0", "f1", "f2", "f3", "t0", "t1", "t2", "t3", "t4", "t5", "t6"];

/**
 * @param {string} tag
 * @param {string} className
 * @param {Record<string, string>} [attrs]
 */
function el(tag, className, attrs = {}) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  return node;
}

/**
 * The pile a card or slot element of a board stands in: the board gives every one a
 * `data-place`.
 * @param {HTMLElement} node
 */
function pileOf(node) {
  return /** @type {PileName} */ (node.dataset.place);
}

/**
 * Fill a card element with its face (or back).
 * @param {HTMLElement} node
 * @param {Card} card
 * @param {boolean} up
 */
function paintCard(node, card, up) {
  up = up && card !== UNKNOWN;
  node.replaceChildren();
  node.classList.toggle("back", !up);
  node.classList.toggle("red", up && isRed(card));
  node.setAttribute("aria-label", cardName(up ? card : UNKNOWN));
  node.dataset.card = up ? String(card) : "";
  if (!up) return;
  const label = cardLabel(card);
  const rank = rankOf(card);
  const suit = SUIT_SYMBOLS[Math.floor(card / 13)];
  const corner = el("span", "corner top", { "aria-hidden": "true" });
  corner.textContent = label;
  const centre = el("span", rank > 10 ? "centre face" : "centre", { "aria-hidden": "true" });
  centre.textContent = rank > 10 ? RANK_TEXT[rank] : suit;
  if (rank > 10) {
    const small = el("span", "face-suit");
    small.textContent = suit;
    centre.append(small);
  }
  const bottom = el("span", "corner bottom", { "aria-hidden": "true" });
  bottom.textContent = label;
  node.append(corner, centre, bottom);
}

export class BoardView {
  /**
   * @param {HTMLElement} root an empty element to draw into
   * @param {BoardOptions} options
   */
  constructor(
    root,
    {
      interactive = false,
      variant,
      onMove = () => {},
      onStock = () => {},
      label = () => t("game.board.label"),
      fitHeight = false,
    },
  ) {
    this.root = root;
    this.interactive = interactive;
    this.fitHeight = fitHeight;
    this.variant = variant;
    this.onMove = onMove;
    this.onStock = onStock;
    this.label = label;
    /** @type {View | null} */
    this.view = null;
    /** @type {Placed | null} */
    this.placed = null;
    /** The height `placed` was laid out for (0: none asked). */
    this.laidOutHeight = 0;
    /** @type {Map<string, HTMLElement>} */
    this.elements = new Map();
    /** @type {Map<PileName, HTMLElement>} */
    this.slots = new Map();
    /** @type {Selection} */
    this.selection = emptySelection();
    this.reveal = false;
    /** One-click moves: a click sends a card to its best place (the page sets it). */
    this.autoMove = false;
    /** @type {Hint | null} */
    this.hint = null;
    /** Cards drawn as ghosts (a replay's winning line): translucent, dashed. */
    /** @type {Set<Card>} */
    this.ghosts = new Set();
    /** @type {Press | null} */
    this.drag = null;
    /** @type {(() => void)[]} */
    this.unbinders = [];
    this.stockMark = el("span", "slot-mark", { "aria-hidden": "true" });
    this.stockCount = el("span", "stock-count", { "aria-hidden": "true" });
    this.hiddenBadge = el("span", "hidden-badge");
    root.classList.add("board");
    root.classList.toggle("interactive", interactive);
    root.setAttribute("role", "group");
    root.setAttribute("aria-label", this.labelText());
    this.layer = el("div", "cards");
    this.buildSlots();
    root.append(this.layer);
    if (interactive) this.bindInput();
    const observer = new ResizeObserver(() => this.render());
    observer.observe(root);
    this.unbinders.push(() => observer.disconnect());
    this.unbinders.push(onLocaleChange(() => this.relabel()));
    if (fitHeight) {
      const onResize = () => this.render();
      window.addEventListener("resize", onResize);
      this.unbinders.push(() => window.removeEventListener("resize", onResize));
    }
  }

  /** The board's accessible name in the active language. */
  labelText() {
    return typeof this.label === "function" ? this.label() : this.label;
  }

  /**
   * Name the board, its piles and its cards again in the active language (a language
   * switch: called by itself); `label` replaces the board's name.
   * @param {string | (() => string)} [label]
   */
  relabel(label) {
    if (label !== undefined) this.label = label;
    this.root.setAttribute("aria-label", this.labelText());
    for (const node of this.elements.values()) delete node.dataset.painted;
    this.render();
  }

  buildSlots() {
    for (const name of PILES) {
      const slot = el("div", `slot slot-${name[0]}`, { "data-place": name });
      if (this.interactive) {
        slot.setAttribute("role", "button");
        slot.tabIndex = 0;
      } else {
        slot.setAttribute("role", "img");
      }
      if (name[0] === "f") {
        const mark = el("span", "slot-mark", { "aria-hidden": "true" });
        mark.textContent = SUIT_SYMBOLS[Number(name[1])];
        slot.append(mark);
      }
      if (name === "stock") slot.append(this.stockMark, this.stockCount);
      this.slots.set(name, slot);
      this.root.append(slot);
    }
    this.root.append(this.hiddenBadge);
  }

  /**
   * Draw `view` (already including predicted moves); `reveal` shows face-down cards.
   * @param {View} view
   */
  update(view, { reveal = false } = {}) {
    this.view = view;
    this.reveal = reveal;
    this.selection = follow(this.selection, view);
    this.render();
  }

  /**
   * Draw these face-up cards as ghosts (empty: none).
   * @param {Set<Card>} ghosts
   */
  setGhosts(ghosts) {
    this.ghosts = ghosts;
    this.render();
  }

  /** @param {Hint | null} hint */
  setHint(hint) {
    this.hint = hint;
    this.render();
  }

  render() {
    const view = this.view;
    if (!view) return;
    const width = this.root.clientWidth;
    if (!width) return;
    const height = this.availableHeight();
    const before = this.placed;
    // A new size (the window resized, the page laid out again) is not a move: the cards
    // take their new places at once, so that what is drawn is always where the layout
    // says, and a press or a drop made meanwhile lands where the pointer is.
    const resized = before !== null && (before.width !== width || this.laidOutHeight !== height);
    // While cards are dragged the board keeps its drawing, unless its size changed.
    if (this.drag?.moved && !resized) return;
    const placed = layout(view, { width, height, draw: this.variant.draw, reveal: this.reveal });
    this.placed = placed;
    this.laidOutHeight = height;
    if (resized) this.root.classList.add("relayout");
    const { cardW, cardH } = placed.metrics;
    this.root.style.setProperty("--cw", `${cardW}px`);
    this.root.style.setProperty("--ch", `${cardH}px`);
    this.root.style.height = `${placed.height}px`;
    this.renderSlots(view, placed);
    const seen = new Set();
    const stockSlot = placed.slots.stock;
    for (const item of placed.cards) {
      seen.add(item.key);
      let node = this.elements.get(item.key);
      if (!node) {
        node = el("div", "card", { role: "img" });
        node.dataset.key = item.key;
        this.elements.set(item.key, node);
        // A card turned from the stock slides out of it; others appear in place.
        const from = item.place === "waste" && view.stock + view.waste.length > 0 ? stockSlot : item;
        node.style.transform = `translate(${from.x}px, ${from.y}px)`;
        if (item.up && item.place[0] === "t") node.classList.add("flip");
        this.layer.append(node);
        if (from !== item) node.getBoundingClientRect();
      }
      const ghost = item.up && this.ghosts.has(item.card);
      if (node.dataset.painted !== `${item.card}:${item.up}:${ghost}`) {
        paintCard(node, item.card, item.up);
        if (ghost) node.setAttribute("aria-label", t("game.card.ghost", { card: cardName(item.card) }));
        node.dataset.painted = `${item.card}:${item.up}:${ghost}`;
      }
      node.dataset.place = item.place;
      node.dataset.index = String(item.index);
      node.style.zIndex = String(item.z);
      node.style.transform = `translate(${item.x}px, ${item.y}px)`;
      node.classList.toggle("revealed", Boolean(item.revealed));
      node.classList.toggle("selected", isPicked(this.selection, view, item));
      node.classList.toggle("hinted", this.isHinted(item));
      node.classList.toggle("ghost", ghost);
    }
    for (const [key, node] of this.elements) {
      if (!seen.has(key)) {
        node.remove();
        this.elements.delete(key);
      }
    }
    if (this.drag?.moved) this.followPointer(view, placed);
    if (resized) {
      this.root.getBoundingClientRect(); // the new places, drawn without a transition
      this.root.classList.remove("relayout");
    }
  }

  /**
   * A drag going on while the board is laid out again: the cards it holds take the new
   * size, under the pointer at the same point of the first card as when it was pressed.
   * @param {View} view
   * @param {Placed} placed
   */
  followPointer(view, placed) {
    const drag = this.drag;
    const grab = drag?.grab;
    if (!drag || !grab) return;
    const old = grab.cardW;
    grab.grabX *= placed.metrics.cardW / old;
    grab.grabY *= placed.metrics.cardW / old;
    grab.cardW = placed.metrics.cardW;
    for (const { node } of grab.nodes) node.classList.remove("dragging");
    grab.nodes = this.runNodes(view, placed, grab.from);
    for (const { node } of grab.nodes) node.classList.add("dragging");
    this.placeDragged(drag);
  }

  /**
   * Draw the dragged cards under the pointer.
   * @param {Press} drag
   */
  placeDragged(drag) {
    const grab = drag.grab;
    const first = grab?.nodes[0];
    if (!grab || !first) return;
    const left = drag.x - grab.grabX;
    const top = drag.y - grab.grabY;
    grab.nodes.forEach(({ node, x, y }, k) => {
      node.style.transform = `translate(${left + x - first.x}px, ${top + y - first.y}px)`;
      node.style.zIndex = String(1000 + k);
    });
  }

  /** With `fitHeight`, the room from the board's top to the bottom of the window. */
  availableHeight() {
    if (!this.fitHeight) return 0;
    const top = this.root.getBoundingClientRect().top + window.scrollY;
    return Math.max(280, window.innerHeight - top - 8);
  }

  /**
   * @param {View} view
   * @param {Placed} placed
   */
  renderSlots(view, placed) {
    // A column's slot reaches down to its top card: its focus ring and its outline as a
    // place to go (a hint's target, a drop target) enclose the whole column.
    /** @type {Map<PileName, number>} */
    const bottoms = new Map();
    for (const item of placed.cards) {
      if (item.place[0] === "t") bottoms.set(item.place, Math.max(bottoms.get(item.place) ?? 0, item.y));
    }
    for (const [name, slot] of this.slots) {
      const { x, y } = placed.slots[name];
      slot.style.transform = `translate(${x}px, ${y}px)`;
      const bottom = bottoms.get(name);
      slot.style.height = bottom === undefined ? "" : `${bottom - y + placed.metrics.cardH}px`;
      slot.setAttribute("aria-label", this.describe(view, name));
      slot.classList.toggle("target", this.hint?.target === name || canDropOn(this.selection, view, name));
    }
    const left = passesLeft(view, this.variant);
    const stockSlot = this.slots.get("stock");
    const canRecycle = view.stock === 0 && view.waste.length > 0 && left > 0;
    stockSlot?.classList.toggle("spent", view.stock === 0 && !canRecycle);
    /** @type {"" | "recycle" | "none"} */
    const mark = view.stock ? "" : canRecycle ? "recycle" : "none";
    if (this.stockMark.dataset.icon !== mark) {
      this.stockMark.dataset.icon = mark;
      this.stockMark.replaceChildren(...(mark ? [icon(mark)] : []));
    }
    this.stockCount.textContent = view.stock ? String(view.stock) : "";
    const hidden = view.foundations_hidden ?? 0;
    this.hiddenBadge.hidden = hidden === 0;
    this.hiddenBadge.textContent = t("game.board.hidden", { n: hidden });
    this.hiddenBadge.title = t("game.board.hiddenWhy");
    // Under the foundations, right-aligned with them, in the strip above the columns.
    const right = placed.width - (placed.slots.f3.x + placed.metrics.cardW);
    this.hiddenBadge.style.transform = `translate(${-right}px, ${placed.slots.f3.y + placed.metrics.cardH + 2}px)`;
  }

  /**
   * Words for a pile, for its accessible name.
   * @param {View} view
   * @param {PileName} name
   */
  describe(view, name) {
    if (name === "stock") {
      const left = passesLeft(view, this.variant);
      return left === Infinity
        ? t("game.pile.stockUnlimited", { cards: view.stock })
        : t("game.pile.stock", { cards: view.stock, passes: left });
    }
    if (name === "waste") {
      const top = view.waste[view.waste.length - 1];
      return view.waste.length ? t("game.pile.waste", { card: cardName(top) }) : t("game.pile.wasteEmpty");
    }
    if (name[0] === "f") {
      const suit = Number(name[1]);
      const rank = view.foundations[suit];
      const foundation = t(`game.pile.foundationName.${SUIT_NAMES[suit]}`);
      return rank
        ? t("game.pile.foundation", { foundation, card: cardName(suit * 13 + rank - 1) })
        : t("game.pile.foundationEmpty", { foundation });
    }
    const column = Number(name[1]) + 1;
    const [down, cards] = view.tableau[column - 1];
    const up = formatList(cards.slice(down).map(cardName));
    if (down && up) return t("game.pile.columnDownUp", { column, down, cards: up });
    if (down) return t("game.pile.columnDown", { column, down });
    if (up) return t("game.pile.column", { column, cards: up });
    return t("game.pile.columnEmpty", { column });
  }

  /** @param {PlacedCard} item */
  isHinted(item) {
    return Boolean(this.hint && this.hint.source === item.place && item.key === this.hint.key);
  }

  // ------------------------------------------------------------ selection

  /**
   * Take the selection a transition gave and do what it asks: offer its move (whose
   * answer redraws the board), or redraw a changed selection and turn the stock.
   * @param {Outcome} outcome
   */
  apply({ selection, move, stock }) {
    const changed = selection.picked !== this.selection.picked;
    this.selection = selection;
    if (move) {
      this.onMove(move);
      return;
    }
    if (changed) this.render();
    if (stock) this.onStock();
  }

  /**
   * Pick up cards to move (keyboard).
   * @param {Source} from
   */
  pickUp(from) {
    this.apply({ selection: pickUp(this.selection, this.view, from), move: null, stock: false });
  }

  /** Put the picked-up cards back. */
  putDown() {
    this.apply({ selection: putDown(this.selection), move: null, stock: false });
  }

  /**
   * Put the picked-up cards on a place (keyboard).
   * @param {Place} to
   */
  drop(to) {
    if (this.view) this.apply(dropOn(this.selection, this.view, to));
  }

  /**
   * Keyboard: a digit 1..7 picks up from that column (again: one card more) or drops on it.
   * @param {number} index
   */
  pressColumn(index) {
    if (this.view) this.apply(pressColumn(this.selection, this.view, index));
  }

  /**
   * Activate a pile as a click would (Enter on a focused pile).
   * @param {PileName} name
   */
  activate(name) {
    if (name[0] === "f" && !this.selection.picked && !this.variant.f2t) return;
    if (this.view) this.apply(activate(this.selection, this.view, name));
  }

  /**
   * Whether cards may be taken from `from`: a foundation gives cards back only in the
   * optional variant (`f2t`).
   * @param {Source} from
   */
  gives(from) {
    return from.kind !== "foundation" || this.variant.f2t;
  }

  /**
   * What a press on a card picks up (`sourceAt`), under this game's rules.
   * @param {View} view
   * @param {PileName} name
   * @param {number} index
   */
  sourceAt(view, name, index) {
    const from = sourceAt(view, name, index);
    return from && this.gives(from) ? from : null;
  }

  // ------------------------------------------------------------ pointer input

  bindInput() {
    const root = this.root;
    /**
     * @template {keyof HTMLElementEventMap} K
     * @param {K} type
     * @param {(event: HTMLElementEventMap[K]) => void} handler
     */
    const listen = (type, handler) => {
      root.addEventListener(type, handler);
      this.unbinders.push(() => root.removeEventListener(type, handler));
    };
    listen("pointerdown", (event) => this.pointerDown(event));
    listen("pointermove", (event) => this.pointerMove(event));
    listen("pointerup", (event) => this.pointerUp(event));
    listen("pointercancel", () => this.cancelDrag());
    // A drag whose pointer the board lost (no pointerup will come) goes back. Only the
    // board's own capture counts: a touch captures the pressed card at once, and the
    // board taking the pointer over when a drag starts makes that card lose it.
    listen("lostpointercapture", (event) => {
      const drag = this.drag;
      if (drag?.moved && event.target === root && event.pointerId === drag.pointerId) this.cancelDrag();
    });
    listen("keydown", (event) => {
      const target = event.target;
      if (!(target instanceof HTMLElement)) return;
      const name = target.dataset.place;
      if (name && (event.key === "Enter" || event.key === " ") && target.classList.contains("slot")) {
        event.preventDefault();
        event.stopPropagation();
        this.activate(pileOf(target));
      }
    });
  }

  /** @param {PointerEvent} event */
  pointerDown(event) {
    const view = this.view;
    const placed = this.placed;
    if (event.button !== 0 || !view || !placed) return;
    if (!(event.target instanceof Element) || !event.target.closest(".card, .slot")) return;
    // What was pressed, by the layout: a card still sliding into place does not catch
    // a press meant for what is under it (fast clicks on the stock all count).
    const box = this.root.getBoundingClientRect();
    const hit = pieceAt(placed, event.clientX - box.left, event.clientY - box.top);
    const node = hit?.card ? this.elements.get(hit.card.key) : hit?.slot ? this.slots.get(hit.slot) : null;
    if (!node) return;
    const name = pileOf(node);
    /** @type {Grab | null} */
    let grab = null;
    if (node.classList.contains("card")) {
      const from = sourceAt(view, name, Number(node.dataset.index));
      const placedCard = placed.cards.find((c) => c.key === node.dataset.key);
      if (from && from.kind !== "stock" && this.gives(from) && placedCard) {
        const rect = this.root.getBoundingClientRect();
        grab = {
          from,
          grabX: event.clientX - rect.left - placedCard.x,
          grabY: event.clientY - rect.top - placedCard.y,
          cardW: placed.metrics.cardW,
          nodes: this.runNodes(view, placed, from),
        };
      }
    }
    this.drag = {
      node,
      name,
      startX: event.clientX,
      startY: event.clientY,
      x: event.clientX - box.left,
      y: event.clientY - box.top,
      moved: false,
      pointerId: event.pointerId,
      grab,
    };
  }

  /**
   * The elements of the cards `from` gives, with their places.
   * @param {View} view
   * @param {Placed} placed
   * @param {Source} from
   */
  runNodes(view, placed, from) {
    const cards = cardsAt(view, from) ?? [];
    return placed.cards
      .filter((item) => (!item.up || item.card === UNKNOWN ? false : cards.includes(item.card)))
      .flatMap((item) => {
        const node = this.elements.get(item.key);
        return node ? [{ node, x: item.x, y: item.y }] : [];
      });
  }

  /** @param {PointerEvent} event */
  pointerMove(event) {
    const drag = this.drag;
    if (!drag || !drag.grab || event.pointerId !== drag.pointerId) return;
    const dx = event.clientX - drag.startX;
    const dy = event.clientY - drag.startY;
    if (!drag.moved && !isDrag(dx, dy)) return;
    if (!drag.moved) {
      drag.moved = true;
      this.selection = putDown(this.selection);
      this.root.setPointerCapture?.(event.pointerId);
      for (const { node } of drag.grab.nodes) node.classList.add("dragging");
    }
    const box = this.root.getBoundingClientRect();
    drag.x = event.clientX - box.left;
    drag.y = event.clientY - box.top;
    this.placeDragged(drag);
    event.preventDefault();
  }

  /** @param {PointerEvent} event */
  pointerUp(event) {
    const drag = this.drag;
    if (!drag || event.pointerId !== drag.pointerId) return;
    this.drag = null;
    const view = this.view;
    if (!view) return;
    if (drag.moved && drag.grab && this.placed) {
      // The board as laid out for its size now (a resize its observer has not told yet
      // lays it out here), the dragged cards following.
      if (this.root.clientWidth !== this.placed.width || this.laidOutHeight !== this.availableHeight()) {
        const box = this.root.getBoundingClientRect();
        drag.x = event.clientX - box.left;
        drag.y = event.clientY - box.top;
        this.drag = drag;
        this.render();
        this.drag = null;
      }
      const { from, grabX, grabY, nodes } = drag.grab;
      for (const { node } of nodes) node.classList.remove("dragging");
      const rect = this.root.getBoundingClientRect();
      const { cardW, cardH } = this.placed.metrics;
      const cx = event.clientX - rect.left - grabX + cardW / 2;
      const cy = event.clientY - rect.top - grabY + cardH / 2;
      const to = dropTarget(view, this.placed, from, cx, cy);
      const token = to && moveToken(from, to);
      if (token) this.onMove(token);
      else this.render(); // back to where it came from, by transition
      return;
    }
    const isCard = drag.node.classList.contains("card");
    this.apply(
      tap(this.selection, view, {
        key: isCard ? (drag.node.dataset.key ?? "") : `slot:${drag.name}`,
        name: drag.name,
        source: isCard ? this.sourceAt(view, drag.name, Number(drag.node.dataset.index)) : null,
        now: performance.now(),
        autoMove: this.autoMove ? this.variant : null,
      }),
    );
  }

  cancelDrag() {
    if (!this.drag) return;
    for (const { node } of this.drag.grab?.nodes ?? []) node.classList.remove("dragging");
    this.drag = null;
    this.render();
  }

  destroy() {
    for (const unbind of this.unbinders.splice(0)) unbind();
    this.root.replaceChildren();
  }
}
