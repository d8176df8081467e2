// @ts-check
/**
 * Head to head, under a finished race's results: for each other person who raced it (not
 * bots), your record against them over every game you finished together, from
 * `GET /api/players/ME/vs/THEM` (docs/protocol.md section 10): "You 3 – 1 Ann · 5 games
 * together · 1 draw", with a link to your games together (`#/me/games?opponent=ID`). A
 * first game together says so ("Your first game against Ann") rather than a score of
 * this one race. Shown to the race's racers only.
 *
 * The history database is written a moment after the results are sent (an outbox drained
 * by the server), so the record may not count this race yet: it is asked for again,
 * a little later each time, until its `last_played` reaches the race's end.
 * Every text is the catalog's (`games.h2h.*`).
 */

import { t, tParts } from "../i18n.js";
import { getJSON, h } from "../ui.js";
import { shownName } from "./bots.js";
import { ago } from "./games.js";
import { playerLink } from "./profile.js";

/** @import { HeadToHead, RankingRow } from "../wire.js" */

/** The most racers a results page asks records for (a tournament heat seats 100). */
export const MAX_RIVALS = 7;

/** Waits before asking again for a record that does not count the race yet (ms). */
export const RETRY_MS = [300, 600, 1200, 2400, 4800];

/**
 * The people a racer's records are shown against: every other racer who is not a bot,
 * in rank order; none when `me` did not race, or when there are too many to list.
 * @param {RankingRow[]} ranking
 * @param {string | null} me
 */
export function rivals(ranking, me) {
  if (!me || !ranking.some((row) => row.user === me)) return [];
  const others = ranking.filter((row) => row.user !== me && !row.bot);
  return others.length > MAX_RIVALS ? [] : others;
}

/**
 * Whether a record counts the race that ended at `endedAt` (ms; unknown: any game does).
 * @param {HeadToHead} record
 * @param {number | undefined} endedAt
 */
export function counts(record, endedAt) {
  if (record.last_played === null || record.games < 1) return false;
  return endedAt === undefined || record.last_played >= endedAt;
}

/**
 * A record's parts in words: the score (or that this is a first game), and what follows
 * it: games together, draws, and when you last played when that is after this race.
 * @param {HeadToHead} record
 * @param {string} name the rival's name as shown
 * @param {number | undefined} endedAt this race's end (ms)
 * @param {number} now ms
 * @returns {{score: string, details: string[]}}
 */
export function recordText(record, name, endedAt, now) {
  if (record.games <= 1) return { score: t("games.h2h.first", { name }), details: [] };
  const details = [t("games.h2h.games", { games: record.games })];
  if (record.draws) details.push(t("games.h2h.draws", { draws: record.draws }));
  if (record.last_played !== null && endedAt !== undefined && record.last_played > endedAt)
    details.push(t("games.h2h.last", { when: ago(record.last_played, now) }));
  return {
    score: t("games.h2h.record", { wins: record.wins, losses: record.losses, name }),
    details,
  };
}

/**
 * A record as shown, here and on your games page: the score in bold, then what follows
 * it, dimmed.
 * @param {HeadToHead} record
 * @param {string} name the rival's name as shown
 * @param {number | undefined} endedAt this race's end (ms; none: no "last played")
 * @param {number} now ms
 * @param {Node} [link] the rival's name as a link to its profile, in place of `name`
 */
export function recordLine(record, name, endedAt, now, link) {
  const { score, details } = recordText(record, name, endedAt, now);
  const shown = !link
    ? [score]
    : record.games <= 1
      ? tParts("games.h2h.first", { name: link })
      : tParts("games.h2h.record", { wins: record.wins, losses: record.losses, name: link });
  return [h("strong", {}, ...shown), details.length ? h("span.muted", {}, details.join(" · ")) : null];
}

export class HeadToHeadPanel {
  /** @param {() => number} now the server's time, as the page estimates it */
  constructor(now) {
    this.now = now;
    this.node = h("section.head-to-head", {
      hidden: true,
      "data-testid": "head-to-head",
      "aria-labelledby": "head-to-head-title",
    });
    /** @type {string | null} the race shown (`room/gen`) */
    this.key = null;
    /** @type {RankingRow[]} */
    this.rivals = [];
    /** @type {Map<string, HeadToHead>} by the rival's user id */
    this.records = new Map();
    /** @type {number | undefined} */
    this.endedAt = undefined;
    /** @type {number | undefined} */
    this.timer = undefined;
    /** Whether records are still asked for (shown once all count the race, or time is up). */
    this.asking = false;
  }

  /**
   * Show the records of the race `room`/`gen` (asked for once per race), or nothing.
   * @param {{room: string, gen: number, ranking: RankingRow[]} | null} results
   * @param {string | null} me the viewer's user id
   * @param {number | undefined} endedAt the race's end (ms)
   */
  show(results, me, endedAt) {
    const key = results ? `${results.room}/${results.gen}` : null;
    if (key !== this.key) {
      this.stop();
      this.key = key;
      this.records = new Map();
      this.rivals = results ? rivals(results.ranking, me) : [];
      this.endedAt = endedAt;
      this.asking = Boolean(me && this.rivals.length);
      if (me && this.asking) this.ask(me, key, 0);
    }
    this.endedAt ??= endedAt;
    this.draw();
  }

  /**
   * Ask for every record not yet counting the race; again later while some do not.
   * @param {string} me
   * @param {string | null} key
   * @param {number} attempt
   */
  async ask(me, key, attempt) {
    const waiting = this.rivals.filter((r) => !this.isCounted(r.user));
    const answers = await Promise.all(
      waiting.map((rival) =>
        getJSON(`/api/players/${encodeURIComponent(me)}/vs/${encodeURIComponent(rival.user)}`).catch(
          () => null,
        ),
      ),
    );
    if (key !== this.key) return; // another race meanwhile
    waiting.forEach((rival, i) => {
      const record = /** @type {HeadToHead | null} */ (answers[i]);
      if (record) this.records.set(rival.user, record);
    });
    const left = this.rivals.some((r) => !this.isCounted(r.user));
    if (left && attempt < RETRY_MS.length) {
      this.timer = window.setTimeout(() => this.ask(me, key, attempt + 1), RETRY_MS[attempt]);
      return;
    }
    this.asking = false;
    this.draw();
  }

  /** @param {string} user */
  isCounted(user) {
    const record = this.records.get(user);
    return Boolean(record && counts(record, this.endedAt));
  }

  /** The records, once each counts the race (or no more tries are left). */
  draw() {
    const shown = this.rivals.filter((r) => this.records.has(r.user));
    this.node.hidden = this.asking || !shown.length;
    if (this.node.hidden) return;
    const now = this.now();
    this.node.replaceChildren(
      h("h3", { id: "head-to-head-title" }, t("games.h2h.title")),
      h(
        "ul.list",
        {},
        shown.map((rival) => {
          const record = /** @type {HeadToHead} */ (this.records.get(rival.user));
          return h(
            "li.row",
            { "data-testid": `head-to-head-${rival.user}` },
            ...recordLine(record, shownName(rival), this.endedAt, now, playerLink(rival)),
            record.games > 1
              ? h("a", { href: `#/me/games?opponent=${encodeURIComponent(rival.user)}` }, t("games.h2h.see"))
              : null,
          );
        }),
      ),
    );
  }

  stop() {
    window.clearTimeout(this.timer);
    this.timer = undefined;
    this.asking = false;
  }
}
