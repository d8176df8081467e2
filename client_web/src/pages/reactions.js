// @ts-check
/**
 * Reactions in a room (docs/protocol.md, section 7f): the bar that sends one of the six
 * fixed reactions, the toggle that shows them or not, and the layer over the boards
 * where the counts of each `reactions` frame float up for a moment (still, then gone,
 * with reduced motion).
 *
 * Each reaction is an id on the wire drawn as an emoji; its name for screen readers is
 * the catalog's (`room.reactions.names.*`). The floating layer is decoration, hidden
 * from assistive technology: a crowd's reactions every second would drown what matters.
 * The panel holds no room state: the room page says when it is shown and what it sends.
 */

import { formatNumber, t } from "../i18n.js";
import { h } from "../ui.js";

/** @typedef {"clap" | "fire" | "wow" | "laugh" | "sad" | "party"} ReactionId */

/** The reactions in the bar's order, each with its emoji. */
export const REACTIONS = /** @type {const} */ ([
  ["clap", "👏"],
  ["fire", "🔥"],
  ["wow", "😮"],
  ["laugh", "😂"],
  ["sad", "😢"],
  ["party", "🎉"],
]);

const EMOJI = new Map(/** @type {[string, string][]} */ (REACTIONS.map(([id, emoji]) => [id, emoji])));

/** How long one reaction stays over the boards (ms); style.css animates it as long. */
export const FLOAT_MS = 2400;

/** At most this many reactions float at once: a crowd's second is a few, with counts. */
export const MAX_FLOATING = 12;

/**
 * What floats for one `reactions` frame: each reaction sent, with its count, the most
 * sent first, at most `room` of them.
 * @param {Record<string, number>} counts
 * @param {number} room how many may still float
 * @returns {{id: string, emoji: string, count: number}[]}
 */
export function floatsFor(counts, room) {
  return Object.entries(counts)
    .filter(([id, count]) => EMOJI.has(id) && Number.isInteger(count) && count > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, Math.max(0, room))
    .map(([id, count]) => ({ id, emoji: EMOJI.get(id) ?? "", count }));
}

export class ReactionsPanel {
  /**
   * @param {{send: (id: ReactionId) => void, toggle: () => void}} actions
   */
  constructor({ send, toggle }) {
    this.toggleAction = toggle;
    /** @type {HTMLButtonElement[]} */
    this.buttons = REACTIONS.map(([id, emoji]) =>
      h(
        "button.ghost.reaction",
        { type: "button", "data-testid": `react-${id}`, dataset: { reaction: id }, onclick: () => send(id) },
        emoji,
      ),
    );
    this.bar = h(
      "div.reaction-bar",
      { role: "group", "data-testid": "reaction-bar", hidden: true },
      this.buttons,
    );
    this.layer = h("div.reaction-layer", { "aria-hidden": "true", "data-testid": "reaction-layer" });
    this.on = false;
    this.relabel();
  }

  /** The bar's and its buttons' names in the active language. */
  relabel() {
    this.bar.setAttribute("aria-label", t("room.reactions.bar"));
    for (const button of this.buttons) {
      const name = t(`room.reactions.names.${button.dataset.reaction}`);
      const label = t("room.reactions.send", { name });
      button.setAttribute("aria-label", label);
      button.title = label;
    }
  }

  /**
   * Show the bar (to those who may react) or not, and whether reactions are shown.
   * @param {{canSend: boolean, on: boolean}} state
   */
  update({ canSend, on }) {
    this.bar.hidden = !canSend;
    this.on = on;
    if (!on) this.layer.replaceChildren();
  }

  /** The room tools' toggle: pressed while reactions are shown. */
  toggleButton() {
    return h(
      "button.ghost",
      {
        type: "button",
        "aria-pressed": String(this.on),
        title: t("room.reactions.toggleTitle"),
        onclick: this.toggleAction,
        "data-testid": "reactions-toggle",
      },
      t("room.reactions.toggle"),
    );
  }

  /**
   * One `reactions` frame: its reactions float over the boards for a moment.
   * @param {Record<string, number>} counts
   */
  show(counts) {
    if (!this.on) return;
    // How many reactions this page was shown in all (what the browser tests read).
    const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
    this.layer.dataset.received = String(Number(this.layer.dataset.received ?? 0) + total);
    for (const { id, emoji, count } of floatsFor(counts, MAX_FLOATING - this.layer.childElementCount)) {
      const node = h(
        "span.reaction-float",
        {
          dataset: { reaction: id, count: String(count) },
          style: `left:${8 + Math.random() * 80}%`,
        },
        emoji,
        count > 1 ? h("small", {}, `×${formatNumber(count)}`) : null,
      );
      this.layer.append(node);
      window.setTimeout(() => node.remove(), FLOAT_MS);
    }
  }
}
