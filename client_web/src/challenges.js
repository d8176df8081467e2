// @ts-check
/**
 * Challenges from friends, on every page: a `challenged` frame shows a notice with
 * *Accept* and *Decline* until the challenge expires; `challenge_ended` takes both
 * players to their race once accepted, or says it was declined (docs/protocol.md
 * section 7h). The notices live in one region of the page (`#toasts`), outside the
 * routed pages, so a challenge reaches the player whatever it is doing. Every text is
 * the catalog's (`friends.toast.*`).
 */

import { t } from "./i18n.js";
import { describeVariant, parseVariant } from "./rules.js";
import { h } from "./ui.js";

/** @import { App } from "./main.js" */
/** @import { ChallengedFrame, ServerFrame } from "./wire.js" */

/** How long a notice that needs no answer stays (ms). */
const NOTICE_MS = 8000;

export class ChallengeInbox {
  /** @param {App} app */
  constructor(app) {
    this.app = app;
    this.conn = app.connection();
    this.region = h("div.toasts", { id: "toasts", "aria-live": "polite", "data-testid": "toasts" });
    document.body.append(this.region);
    /** The notices shown, by the challenger's user id (or "ended:" and the other's). */
    /** @type {Map<string, {node: HTMLElement, timer: number}>} */
    this.shown = new Map();
    this.conn.on("frame", (frame) => this.onFrame(frame));
  }

  /** @param {ServerFrame} frame */
  onFrame(frame) {
    if (frame.t === "challenged") this.offer(frame);
    else if (frame.t === "challenge_ended") {
      this.drop(frame.user);
      if (frame.reason === "accepted" && frame.room) {
        this.app.created.add(frame.room);
        this.app.navigate(`#/room/${frame.room}`);
      } else if (frame.reason === "declined") {
        this.notice(`ended:${frame.user}`, t("friends.toast.declined"));
      }
    }
  }

  /** @param {ChallengedFrame} frame */
  offer(frame) {
    const answer = (/** @type {boolean} */ accept) => {
      this.conn.send({ t: "challenge_answer", user: frame.user, accept });
      this.drop(frame.user);
    };
    const node = h(
      "div.toast",
      { role: "alertdialog", "aria-label": t("friends.toast.title"), "data-testid": "challenge-toast" },
      h(
        "p",
        {},
        t("friends.toast.challenged", {
          name: frame.name,
          variant: describeVariant(parseVariant(frame.variant)),
        }),
      ),
      h(
        "p.row",
        {},
        h(
          "button",
          { type: "button", onclick: () => answer(true), "data-testid": "challenge-accept" },
          t("friends.toast.accept"),
        ),
        h(
          "button.ghost",
          { type: "button", onclick: () => answer(false), "data-testid": "challenge-decline" },
          t("friends.toast.decline"),
        ),
      ),
    );
    const left = Math.max(0, frame.expires_at - this.conn.now());
    this.show(frame.user, node, left);
  }

  /**
   * A notice that needs no answer, with a button to close it.
   * @param {string} key
   * @param {string} text
   */
  notice(key, text) {
    const node = h(
      "div.toast",
      { role: "status" },
      h("p", {}, text),
      h("button.ghost", { type: "button", onclick: () => this.drop(key) }, t("friends.toast.close")),
    );
    this.show(key, node, NOTICE_MS);
  }

  /**
   * @param {string} key
   * @param {HTMLElement} node
   * @param {number} ms how long it stays
   */
  show(key, node, ms) {
    this.drop(key);
    const timer = window.setTimeout(() => this.drop(key), ms);
    this.shown.set(key, { node, timer });
    this.region.append(node);
  }

  /** @param {string} key */
  drop(key) {
    const shown = this.shown.get(key);
    if (!shown) return;
    window.clearTimeout(shown.timer);
    shown.node.remove();
    this.shown.delete(key);
  }
}
