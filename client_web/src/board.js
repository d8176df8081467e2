/**
 * One board on screen: renders views with keyed card elements (moves and flips are
 * CSS transitions), and for the player's own board turns pointer and keyboard input
 * into move tokens. View-only boards (opponents, spectators, replays) take no input.
 *
 * The board never sends anything: it calls `onMove(token)` and `onStock()`, and the
 * page decides. Every listener it adds is removed by `destroy()`.
 */

import { UNKNOWN, cardLabel, cardName, isRed, rankOf, SUIT_SYMBOLS, SUIT_NAMES } from "./cards.js";
import { layout } from "./layout.js";
import { canMove, cardsAt, foundationToken, moveToken, passesLeft } from "./rules.js";

const DRAG_THRESHOLD = 5;
const DOUBLE_TAP_MS = 350;
const FACE_LETTERS = { 11: "J", 12: "Q", 13: "K" };

function el(tag, className, attrs = {}) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  return node;
}

/** Fill a card element with its face (or back). */
function paintCard(node, card, up) {
  up = up && card !== UNKNOWN;
  node.replaceChildren();
  node.classList.toggle("back", !up);
  node.classList.toggle("red", up && isRed(card));
  node.setAttribute("aria-label", up ? cardName(card) : "face-down card");
  node.dataset.card = up ? String(card) : "";
  if (!up) return;
  const label = cardLabel(card);
  const rank = rankOf(card);
  const suit = SUIT_SYMBOLS[Math.floor(card / 13)];
  const corner = el("span", "corner top", { "aria-hidden": "true" });
  corner.textContent = label;
  const centre = el("span", rank > 10 ? "centre face" : "centre", { "aria-hidden": "true" });
  centre.textContent = rank > 10 ? FACE_LETTERS[rank] : suit;
  if (rank > 10) {
    const small = el("span", "face-suit");
    small.textContent = suit;
    centre.append(small);
  }
  const bottom = el("span", "corner bottom", { "aria-hidden": "true" });
  bottom.textContent = label;
  node.append(corner, centre, bottom);
}

function placeOf(name) {
  if (name === "stock") return { kind: "stock" };
  if (name === "waste") return { kind: "waste" };
  if (name[0] === "f") return { kind: "foundation", suit: Number(name.slice(1)) };
  return { kind: "tableau", index: Number(name.slice(1)) };
}

const PILE_NAMES = ["Column 1", "Column 2", "Column 3", "Column 4", "Column 5", "Column 6", "Column 7"];

export class BoardView {
  /**
   * @param {HTMLElement} root an empty element to draw into
   * @param {{interactive?: boolean, variant: {draw:number, passes:number|null, f2t:boolean},
   *          onMove?: (token: string) => void, onStock?: () => void, label?: string}} options
   */
  constructor(
    root,
    {
      interactive = false,
      variant,
      onMove = () => {},
      onStock = () => {},
      label = "Board",
      fitHeight = false,
    },
  ) {
    this.root = root;
    this.interactive = interactive;
    this.fitHeight = fitHeight;
    this.variant = variant;
    this.onMove = onMove;
    this.onStock = onStock;
    this.view = null;
    this.placed = null;
    this.elements = new Map();
    this.slots = new Map();
    this.selection = null;
    this.reveal = false;
    this.hint = null;
    this.drag = null;
    this.lastTap = { key: null, at: 0 };
    this.unbinders = [];
    root.classList.add("board");
    root.classList.toggle("interactive", interactive);
    root.setAttribute("role", "group");
    root.setAttribute("aria-label", label);
    this.layer = el("div", "cards");
    this.buildSlots();
    root.append(this.layer);
    if (interactive) this.bindInput();
    const observer = new ResizeObserver(() => this.render());
    observer.observe(root);
    this.unbinders.push(() => observer.disconnect());
    if (fitHeight) {
      const onResize = () => this.render();
      window.addEventListener("resize", onResize);
      this.unbinders.push(() => window.removeEventListener("resize", onResize));
    }
  }

  buildSlots() {
    const names = ["stock", "waste", "f0", "f1", "f2", "f3", "t0", "t1", "t2", "t3", "t4", "t5", "t6"];
    for (const name of names) {
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
      if (name === "stock") {
        this.stockMark = el("span", "slot-mark", { "aria-hidden": "true" });
        this.stockCount = el("span", "stock-count", { "aria-hidden": "true" });
        slot.append(this.stockMark, this.stockCount);
      }
      this.slots.set(name, slot);
      this.root.append(slot);
    }
    this.hiddenBadge = el("span", "hidden-badge");
    this.root.append(this.hiddenBadge);
  }

  /** Draw `view` (already including predicted moves); `reveal` shows face-down cards. */
  update(view, { reveal = false } = {}) {
    this.view = view;
    this.reveal = reveal;
    if (this.selection && !cardsAt(view, this.selection)) this.selection = null;
    this.render();
  }

  setHint(hint) {
    this.hint = hint;
    this.render();
  }

  render() {
    if (!this.view || this.drag?.moved) return;
    const width = this.root.clientWidth;
    if (!width) return;
    const placed = layout(this.view, {
      width,
      height: this.availableHeight(),
      draw: this.variant.draw,
      reveal: this.reveal,
    });
    this.placed = placed;
    const { cardW, cardH } = placed.metrics;
    this.root.style.setProperty("--cw", `${cardW}px`);
    this.root.style.setProperty("--ch", `${cardH}px`);
    this.root.style.height = `${placed.height}px`;
    this.renderSlots(placed);
    const seen = new Set();
    const stockSlot = placed.slots.stock;
    for (const item of placed.cards) {
      seen.add(item.key);
      let node = this.elements.get(item.key);
      const fresh = !node;
      if (fresh) {
        node = el("div", "card", { role: "img" });
        node.dataset.key = item.key;
        this.elements.set(item.key, node);
        // A card turned from the stock slides out of it; others appear in place.
        const from =
          item.place === "waste" && this.view.stock + this.view.waste.length > 0 ? stockSlot : item;
        node.style.transform = `translate(${from.x}px, ${from.y}px)`;
        if (item.up && item.place[0] === "t") node.classList.add("flip");
        this.layer.append(node);
        if (from !== item) node.getBoundingClientRect();
      }
      if (node.dataset.painted !== `${item.card}:${item.up}`) {
        paintCard(node, item.card, item.up);
        node.dataset.painted = `${item.card}:${item.up}`;
      }
      node.dataset.place = item.place;
      node.dataset.index = String(item.index);
      node.style.zIndex = String(item.z);
      node.style.transform = `translate(${item.x}px, ${item.y}px)`;
      node.classList.toggle("revealed", Boolean(item.revealed));
      node.classList.toggle("selected", this.isSelected(item));
      node.classList.toggle("hinted", this.isHinted(item));
    }
    for (const [key, node] of this.elements) {
      if (!seen.has(key)) {
        node.remove();
        this.elements.delete(key);
      }
    }
  }

  /** With `fitHeight`, the room from the board's top to the bottom of the window. */
  availableHeight() {
    if (!this.fitHeight) return 0;
    const top = this.root.getBoundingClientRect().top + window.scrollY;
    return Math.max(280, window.innerHeight - top - 8);
  }

  renderSlots(placed) {
    for (const [name, slot] of this.slots) {
      const { x, y } = placed.slots[name];
      slot.style.transform = `translate(${x}px, ${y}px)`;
      slot.setAttribute("aria-label", this.describe(name));
      slot.classList.toggle("target", this.hintTarget() === name || (this.selection && this.canDropOn(name)));
    }
    const left = passesLeft(this.view, this.variant);
    const stockSlot = this.slots.get("stock");
    const canRecycle = this.view.stock === 0 && this.view.waste.length > 0 && left > 0;
    stockSlot.classList.toggle("spent", this.view.stock === 0 && !canRecycle);
    this.stockMark.textContent = this.view.stock ? "" : canRecycle ? "↻" : "✕";
    this.stockCount.textContent = this.view.stock ? String(this.view.stock) : "";
    const hidden = this.view.foundations_hidden ?? 0;
    this.hiddenBadge.hidden = hidden === 0;
    this.hiddenBadge.textContent = `+${hidden} hidden`;
    this.hiddenBadge.style.transform = `translate(${placed.slots.f3.x}px, ${placed.slots.f3.y + placed.metrics.cardH + 2}px)`;
  }

  /** Words for a pile, for its accessible name. */
  describe(name) {
    const view = this.view;
    if (name === "stock") {
      const left = passesLeft(view, this.variant);
      const passes = left === Infinity ? "unlimited passes" : `${left} more pass${left === 1 ? "" : "es"}`;
      return `Stock: ${view.stock} cards, ${passes}`;
    }
    if (name === "waste") {
      const top = view.waste[view.waste.length - 1];
      return view.waste.length ? `Waste: ${cardName(top)} on top` : "Waste: empty";
    }
    if (name[0] === "f") {
      const suit = Number(name[1]);
      const rank = view.foundations[suit];
      return rank
        ? `${SUIT_NAMES[suit]} foundation: up to ${cardName(suit * 13 + rank - 1)}`
        : `${SUIT_NAMES[suit]} foundation: empty`;
    }
    const [faceDown, cards] = view.tableau[Number(name[1])];
    const up = cards.slice(faceDown).map(cardName);
    const parts = [];
    if (faceDown) parts.push(`${faceDown} face-down`);
    if (up.length) parts.push(up.join(", "));
    return `${PILE_NAMES[Number(name[1])]}: ${parts.length ? parts.join(", ") : "empty"}`;
  }

  // ------------------------------------------------------------ selection and hints

  isSelected(item) {
    const sel = this.selection;
    if (!sel) return false;
    if (sel.kind === "tableau")
      return (
        item.place === `t${sel.index}` && item.index >= this.view.tableau[sel.index][1].length - sel.size
      );
    if (sel.kind === "waste") return item.place === "waste" && item.index === this.view.waste.length - 1;
    if (sel.kind === "foundation")
      return item.place === `f${sel.suit}` && item.index === this.view.foundations[sel.suit] - 1;
    return false;
  }

  isHinted(item) {
    return Boolean(this.hint && this.hint.source === item.place && item.key === this.hint.key);
  }

  hintTarget() {
    return this.hint ? this.hint.target : null;
  }

  canDropOn(name) {
    if (!this.selection || name === "stock" || name === "waste") return false;
    return canMove(this.view, this.selection, placeOf(name));
  }

  /** Select cards to move (keyboard or click); returns true when something was selected. */
  select(from) {
    const cards = this.view && cardsAt(this.view, from);
    if (!cards || cards.includes(UNKNOWN)) {
      this.selection = null;
      this.render();
      return false;
    }
    this.selection = from;
    this.render();
    return true;
  }

  clearSelection() {
    if (this.selection) {
      this.selection = null;
      this.render();
    }
  }

  /** Move the selection to a place; returns true when a move was offered to the page. */
  dropSelection(to) {
    const from = this.selection;
    this.selection = null;
    if (!from) return false;
    const token = canMove(this.view, from, to) ? moveToken(from, to) : null;
    if (token) this.onMove(token);
    else this.render();
    return Boolean(token);
  }

  /** Keyboard: a digit 1..7 selects that column (again: one card deeper) or drops on it. */
  pressColumn(index) {
    const sel = this.selection;
    if (sel && !(sel.kind === "tableau" && sel.index === index)) {
      return this.dropSelection({ kind: "tableau", index });
    }
    const [faceDown, cards] = this.view.tableau[index];
    const up = cards.length - faceDown;
    if (!up) return false;
    const size = sel ? (sel.size % up) + 1 : 1;
    return this.select({ kind: "tableau", index, size });
  }

  /** Activate a pile as a click would (Enter on a focused pile). */
  activate(name) {
    if (name === "stock") {
      this.clearSelection();
      this.onStock();
      return;
    }
    const place = placeOf(name);
    if (this.selection) {
      const same =
        place.kind === this.selection.kind &&
        place.index === this.selection.index &&
        place.suit === this.selection.suit;
      if (same) this.clearSelection();
      else this.dropSelection(place);
      return;
    }
    if (place.kind === "tableau") this.pressColumn(place.index);
    else this.select(place);
  }

  // ------------------------------------------------------------ pointer input

  bindInput() {
    const root = this.root;
    const listen = (target, type, handler, options) => {
      target.addEventListener(type, handler, options);
      this.unbinders.push(() => target.removeEventListener(type, handler, options));
    };
    listen(root, "pointerdown", (event) => this.pointerDown(event));
    listen(root, "pointermove", (event) => this.pointerMove(event));
    listen(root, "pointerup", (event) => this.pointerUp(event));
    listen(root, "pointercancel", () => this.cancelDrag());
    listen(root, "keydown", (event) => {
      const name = event.target?.dataset?.place;
      if (name && (event.key === "Enter" || event.key === " ") && event.target.classList.contains("slot")) {
        event.preventDefault();
        event.stopPropagation();
        this.activate(name);
      }
    });
  }

  /** The source a pointer press on `node` would pick up, or null. */
  sourceAt(node) {
    const place = node.dataset.place;
    const index = Number(node.dataset.index);
    if (place === "stock") return { kind: "stock" };
    if (place === "waste") return index === this.view.waste.length - 1 ? { kind: "waste" } : null;
    if (place[0] === "f") {
      const suit = Number(place[1]);
      return index === this.view.foundations[suit] - 1 ? { kind: "foundation", suit } : null;
    }
    const column = Number(place[1]);
    const [faceDown, cards] = this.view.tableau[column];
    if (index < faceDown || cards[index] === UNKNOWN) return null;
    return { kind: "tableau", index: column, size: cards.length - index };
  }

  pointerDown(event) {
    if (event.button !== 0 || !this.view) return;
    const node = event.target.closest(".card, .slot");
    if (!node) return;
    const name = node.dataset.place;
    this.drag = {
      node,
      name,
      startX: event.clientX,
      startY: event.clientY,
      moved: false,
      pointerId: event.pointerId,
    };
    if (node.classList.contains("card")) {
      const from = this.sourceAt(node);
      if (from && from.kind !== "stock") {
        const rect = this.root.getBoundingClientRect();
        const placedCard = this.placed.cards.find((c) => c.key === node.dataset.key);
        this.drag.from = from;
        this.drag.grabX = event.clientX - rect.left - placedCard.x;
        this.drag.grabY = event.clientY - rect.top - placedCard.y;
        this.drag.nodes = this.runNodes(from);
      }
    }
  }

  runNodes(from) {
    const cards = cardsAt(this.view, from) ?? [];
    return this.placed.cards
      .filter((item) => (!item.up || item.card === UNKNOWN ? false : cards.includes(item.card)))
      .map((item) => ({ node: this.elements.get(item.key), x: item.x, y: item.y }));
  }

  pointerMove(event) {
    const drag = this.drag;
    if (!drag || !drag.from || event.pointerId !== drag.pointerId) return;
    const dx = event.clientX - drag.startX;
    const dy = event.clientY - drag.startY;
    if (!drag.moved && Math.hypot(dx, dy) < DRAG_THRESHOLD) return;
    if (!drag.moved) {
      drag.moved = true;
      this.selection = null;
      this.root.setPointerCapture?.(event.pointerId);
      for (const { node } of drag.nodes) node.classList.add("dragging");
    }
    drag.nodes.forEach(({ node, x, y }, k) => {
      node.style.transform = `translate(${x + dx}px, ${y + dy}px)`;
      node.style.zIndex = String(1000 + k);
    });
    event.preventDefault();
  }

  pointerUp(event) {
    const drag = this.drag;
    if (!drag || event.pointerId !== drag.pointerId) return;
    this.drag = null;
    if (drag.moved) {
      for (const { node } of drag.nodes) node.classList.remove("dragging");
      const rect = this.root.getBoundingClientRect();
      const { cardW, cardH } = this.placed.metrics;
      const cx = event.clientX - rect.left - drag.grabX + cardW / 2;
      const cy = event.clientY - rect.top - drag.grabY + cardH / 2;
      const to = this.dropTarget(drag.from, cx, cy);
      if (to) this.onMove(moveToken(drag.from, to));
      else this.render(); // back to where it came from, by transition
      return;
    }
    this.tap(drag.node, drag.name);
  }

  cancelDrag() {
    if (!this.drag) return;
    for (const { node } of this.drag.nodes ?? []) node.classList.remove("dragging");
    this.drag = null;
    this.render();
  }

  /** The legal place nearest to a dropped card's centre, or null. */
  dropTarget(from, cx, cy) {
    const { slots, metrics: m } = this.placed;
    const rowY = slots.t0.y;
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
    return candidates.find((to) => canMove(this.view, from, to)) ?? null;
  }

  tap(node, name) {
    const now = performance.now();
    const isCard = node.classList.contains("card");
    const key = isCard ? node.dataset.key : `slot:${name}`;
    const double = this.lastTap.key === key && now - this.lastTap.at < DOUBLE_TAP_MS;
    this.lastTap = { key, at: now };
    if (name === "stock") {
      this.clearSelection();
      this.onStock();
      return;
    }
    const source = isCard ? this.sourceAt(node) : null;
    if (double && source) {
      const token = foundationToken(this.view, source);
      if (token) {
        this.selection = null;
        this.lastTap = { key: null, at: 0 };
        this.onMove(token);
        return;
      }
    }
    if (this.selection) {
      const place = placeOf(name);
      const same =
        place.kind === this.selection.kind &&
        (place.index ?? place.suit) === (this.selection.index ?? this.selection.suit);
      if (same && source && source.size !== this.selection.size) {
        this.select(source);
        return;
      }
      if (same) {
        this.clearSelection();
        return;
      }
      if (this.dropSelection(place)) return;
    }
    if (source) this.select(source);
  }

  destroy() {
    for (const unbind of this.unbinders.splice(0)) unbind();
    this.root.replaceChildren();
  }
}
