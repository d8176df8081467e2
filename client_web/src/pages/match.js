// @ts-check
/**
 * A match's page (`#/match/ROOM/GEN`, GEN any of its deals): its record from
 * `GET /api/matches/ROOM/GEN` (the score, each deal's winner, links to the deals'
 * replays), where a finished match is found later: the replay of any of its deals
 * links here.
 */

import { t } from "../i18n.js";
import { matchResults } from "../match.js";
import { errorText, getJSON, h } from "../ui.js";
import { titleBar } from "./replay-daily.js";

/** @import { App } from "../main.js" */
/** @import { MatchRecord } from "../wire.js" */

export class MatchPage {
  /**
   * @param {App} app
   * @param {string} roomId
   * @param {number} gen
   */
  constructor(app, roomId, gen) {
    this.app = app;
    this.roomId = roomId;
    this.gen = gen;
    /** @type {HTMLElement | null} */
    this.root = null;
    /** The record, or why there is none: loading, the error, or none such (null). */
    /** @type {MatchRecord | {error: unknown} | null | "loading"} */
    this.data = "loading";
  }

  /** @param {HTMLElement} root */
  async mount(root) {
    this.root = root;
    this.relabel();
    try {
      this.data = /** @type {MatchRecord | null} */ (
        await getJSON(`/api/matches/${encodeURIComponent(this.roomId)}/${this.gen}`)
      );
    } catch (error) {
      this.data = { error };
    }
    this.relabel();
  }

  /** The page again in the active language. */
  relabel() {
    const root = this.root;
    if (!root) return;
    const data = this.data;
    let body;
    if (data === "loading") body = h("p.loading", {}, t("match.loading"));
    else if (data === null)
      body = h("p", {}, t("match.missing"), " ", h("a", { href: "#/" }, t("replay.home")));
    else if ("error" in data)
      body = h("p.error-text", {}, t("match.loadFailed", { reason: errorText(data.error) }));
    else body = matchResults(data);
    root.replaceChildren(h("section.game", {}, titleBar(t("match.title"), ""), body));
  }

  unmount() {
    this.root = null;
  }
}
