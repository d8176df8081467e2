// @ts-check
/**
 * The quick race waiting view (`#/quick/draw1`, `#/quick/draw3`): *Race now* on the home
 * page leads here. The page puts the player in the variant's public queue (`queue`,
 * protocol section 7e) and shows how many wait and for how long, with *Cancel*; once
 * alone a while the server offers the machine (`queued` with `offer`), and the page
 * offers a race against a bot of the level the player picks, or to keep waiting. When a
 * race is made (`matched`) it goes to the room, which joins it as usual.
 *
 * Leaving the page (Cancel, another page) leaves the queue; a dropped connection left it
 * already, so the page queues again as soon as the connection is back (the server keeps
 * the place when it can). Every text is the catalog's (`quick.*`).
 */

import { t } from "../i18n.js";
import { ServerError } from "../net.js";
import { describeVariant, parseVariant } from "../rules.js";
import { errorText, formatTime, h, rerender } from "../ui.js";
import { machineForm } from "./bots.js";

/** @import { App } from "../main.js" */
/** @import { BotLevel, QueuedFrame, ServerFrame } from "../wire.js" */

/** The quick race variants, by the name their route gives them. */
export const QUICK_VARIANTS = Object.freeze({
  draw1: "draw=1 passes=1 f2t=no",
  draw3: "draw=3 passes=3 f2t=no",
});

/** The most racers a quick race seats (the server's `race.quick.QUICK_SEATS`). */
export const QUICK_SEATS = 4;

/**
 * The variant text of a route's quick race name, or null for none.
 * @param {string} name
 * @returns {string | null}
 */
export function quickVariant(name) {
  return Object.hasOwn(QUICK_VARIANTS, name)
    ? QUICK_VARIANTS[/** @type {keyof typeof QUICK_VARIANTS} */ (name)]
    : null;
}

/**
 * What the view says of the queue: nothing known yet, waiting (with the last `queued`),
 * a place another tab took, or the connection lost.
 * @typedef {{state: "joining"} | {state: "waiting", queued: QueuedFrame} | {state: "replaced"} | {state: "lost"}} QueueView
 */

export class QuickPage {
  /**
   * @param {App} app
   * @param {string} variant the variant's text (one of QUICK_VARIANTS)
   */
  constructor(app, variant) {
    this.app = app;
    this.conn = app.connection();
    this.variant = variant;
    /** @type {QueueView} */
    this.view = { state: "joining" };
    /** The player chose to keep waiting after the offer: it is not shown again. */
    this.keepWaiting = false;
    /** @type {HTMLElement | null} */
    this.root = null;
    this.error = h("p.error-text", { role: "alert", "data-testid": "quick-error" });
    this.waited = h("p", { "data-testid": "quick-waited" });
    /** @type {(() => void)[]} */
    this.unbinders = [];
    /** @type {number | undefined} */
    this.clock = undefined;
    /** Whether the page left (or is leaving) the queue itself. */
    this.leaving = false;
  }

  /** @param {HTMLElement} root */
  mount(root) {
    this.root = root;
    this.draw();
    const conn = this.conn;
    this.unbinders.push(conn.on("frame", (frame) => this.onFrame(frame)));
    this.unbinders.push(conn.on("hello", () => this.queue()));
    this.unbinders.push(
      conn.on("down", () => {
        this.view = { state: "lost" };
        this.draw();
      }),
    );
    if (conn.greeted) this.queue();
    this.clock = window.setInterval(() => this.tick(), 1000);
  }

  unmount() {
    window.clearInterval(this.clock);
    for (const unbind of this.unbinders.splice(0)) unbind();
    if (!this.leaving && this.view.state !== "replaced") this.conn.send({ t: "unqueue" });
    this.root = null;
  }

  relabel() {
    if (this.root) rerender(this.root, () => this.build());
  }

  /** Join the queue (again: the server keeps the place this account holds there). */
  async queue() {
    this.error.textContent = "";
    try {
      const queued = await this.conn.request({ t: "queue", variant: this.variant });
      if (this.leaving) return;
      this.view = { state: "waiting", queued };
      this.draw();
    } catch (error) {
      if (!(error instanceof ServerError)) return; // disconnected: queued again once back
      this.error.textContent = t("quick.failed", { reason: errorText(error) });
    }
  }

  /** @param {ServerFrame} frame */
  onFrame(frame) {
    if (frame.t === "matched") {
      this.leaving = true;
      this.app.navigate(`#/room/${frame.room}`);
    } else if (frame.t === "queued" && frame.variant === this.variant && !this.leaving) {
      this.view = { state: "waiting", queued: frame };
      this.draw();
    } else if (frame.t === "unqueued" && frame.reason === "replaced") {
      this.view = { state: "replaced" };
      this.draw();
    }
  }

  /** Leave the queue and go home. */
  async cancel() {
    this.leaving = true;
    try {
      await this.conn.request({ t: "unqueue" });
    } catch {
      // Not waiting any more (a race was made: `matched` takes the page there).
      return;
    }
    this.app.navigate("#/");
  }

  /**
   * Leave the queue, then race the machine on the same variant.
   * @param {BotLevel} level
   */
  async raceMachine(level) {
    this.leaving = true;
    try {
      await this.conn.request({ t: "unqueue" });
    } catch {
      return; // a race was made meanwhile: `matched` takes the page there
    }
    try {
      const reply = await this.conn.request({
        t: "create",
        kind: "race",
        variant: this.variant,
        seats: 2,
        time_limit: 900,
        deal: "certified",
        bots: true,
        machine: level,
      });
      this.app.created.add(reply.room);
      this.app.navigate(`#/room/${reply.room}`);
    } catch (error) {
      this.leaving = false;
      this.error.textContent = t("quick.failed", { reason: errorText(error) });
      this.queue();
    }
  }

  /** The time waited, once a second. */
  tick() {
    if (this.view.state !== "waiting") return;
    const ms = Math.max(0, this.conn.now() - this.view.queued.since);
    this.waited.textContent = t("quick.waited", { time: formatTime(ms) });
  }

  draw() {
    this.root?.replaceChildren(this.build());
    this.tick();
  }

  /** The view in the active language. */
  build() {
    const view = this.view;
    const variant = describeVariant(parseVariant(this.variant));
    /** @type {(HTMLElement | string)[]} */
    const body = [];
    if (view.state === "joining") body.push(h("p", { "data-testid": "quick-status" }, t("quick.joining")));
    else if (view.state === "lost") body.push(h("p", { "data-testid": "quick-status" }, t("quick.lost")));
    else if (view.state === "replaced") {
      body.push(
        h("p", { "data-testid": "quick-status" }, t("quick.replaced")),
        h(
          "button",
          {
            type: "button",
            "data-testid": "quick-here",
            onclick: () => {
              this.view = { state: "joining" };
              this.draw();
              this.queue();
            },
          },
          t("quick.here"),
        ),
      );
    } else {
      const { waiting, offer } = view.queued;
      body.push(
        h(
          "p",
          { "data-testid": "quick-status", "aria-live": "polite" },
          t("quick.waiting", { count: waiting }),
        ),
        h("p", {}, waiting > 1 ? t("quick.filling", { seats: QUICK_SEATS }) : t("quick.alone")),
        this.waited,
      );
      if (offer && !this.keepWaiting) {
        body.push(
          h(
            "section.quick-offer",
            { "aria-labelledby": "quick-offer-title", "data-testid": "quick-offer" },
            h("h2", { id: "quick-offer-title" }, t("quick.offer.title")),
            h("p", {}, t("quick.offer.lead")),
            machineForm((level) => this.raceMachine(level)),
            h(
              "button.ghost",
              {
                type: "button",
                "data-testid": "quick-keep",
                onclick: () => {
                  this.keepWaiting = true;
                  this.draw();
                },
              },
              t("quick.offer.keep"),
            ),
          ),
        );
      }
    }
    return h(
      "div.home",
      {},
      h(
        "section.panel.quick",
        { "aria-labelledby": "quick-title", "data-testid": "quick-view" },
        h("h1", { id: "quick-title" }, t("quick.title")),
        h("p.quick-variant", {}, t("quick.variant", { variant })),
        ...body,
        this.error,
        h(
          "button.ghost",
          { type: "button", "data-testid": "quick-cancel", onclick: () => this.cancel() },
          t("quick.cancel"),
        ),
      ),
    );
  }
}
