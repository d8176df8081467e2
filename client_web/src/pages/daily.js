// @ts-check
/**
 * Daily challenges: today's deals with your attempt, your rank and the leaderboards
 * (updated live as players finish), your streaks, and the archive of past days with
 * their revealed deals and replays.
 *
 * Routes: `#/daily` (today) and `#/daily/DATE/SLUG` (one day's leaderboard).
 *
 * Every text is the catalog's (`daily.*`); `relabel` draws the page again from what it
 * last fetched.
 */

import { formatDate, formatNumber, t, tParts } from "../i18n.js";
import { describeVariant, parseVariant } from "../rules.js";
import { errorText, formatTime, getJSON, h, rerender } from "../ui.js";
import { playerLink } from "./profile.js";
import { titleBar } from "./replay-daily.js";

/** @import { App } from "../main.js" */
/** @import { DailyAttempt, DailyChallenge, DailyDay, DailyLeaderboard, DailyRow, DailyStats, DailyToday,
 *   ServerFrame } from "../wire.js" */

const PAGE_SIZE = 20;

/**
 * What the page shows, from its last fetch: today's challenges, one day's leaderboard,
 * or why there is neither (null while loading).
 * @typedef {{kind: "today", today: DailyToday, archive: DailyDay[], stats: DailyStats | null,
 *     boards: (DailyLeaderboard | null)[]}
 *   | {kind: "day", date: string, slug: string, board: DailyLeaderboard, day: DailyDay | null}
 *   | {kind: "unavailable"} | {kind: "missing"} | null} Shown
 */

/**
 * Words for a leaderboard row's result.
 * @param {{won: boolean, time_ms: number | null, found: number}} row
 */
export function resultWords(row) {
  return row.won
    ? t("daily.result.won", { time: formatTime(row.time_ms, { tenths: true }) })
    : t("daily.result.found", { found: row.found });
}

/**
 * A day of the server's calendar (`2026-12-03`) as the active language writes a date.
 * @param {string} date
 * @param {"long" | "medium"} [style]
 */
export function dayText(date, style = "long") {
  const [year, month, day] = date.split("-").map(Number);
  if (!year || !month || !day) return date;
  return formatDate(Date.UTC(year, month - 1, day), { dateStyle: style, timeZone: "UTC" });
}

/** @param {number} ms */
function countdown(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const hh = Math.floor(seconds / 3600);
  const mm = String(Math.floor((seconds % 3600) / 60)).padStart(2, "0");
  const ss = String(seconds % 60).padStart(2, "0");
  return `${hh}:${mm}:${ss}`;
}

/**
 * A leaderboard table; `me` marks your row, `replays` adds replay links.
 * @param {DailyRow[]} rows
 * @param {{me?: string | null, replays?: boolean}} [options]
 */
function boardTable(rows, { me = null, replays = false } = {}) {
  if (!rows.length) return h("p.empty", {}, t("daily.leaderboard.empty"));
  const columns = [
    t("daily.column.rank"),
    t("daily.column.player"),
    t("daily.column.result"),
    t("daily.column.moves"),
    replays ? t("daily.column.replay") : null,
  ];
  return h(
    "table.results.leaderboard",
    {},
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        columns.filter((x) => x !== null).map((text) => h("th", { scope: "col" }, text)),
      ),
    ),
    h(
      "tbody",
      {},
      rows.map((row) =>
        h(
          `tr${row.user === me ? ".me" : ""}`,
          { "data-testid": "leaderboard-row" },
          h("td", {}, formatNumber(row.rank)),
          h("td", {}, playerLink(row)),
          h("td", {}, resultWords(row)),
          h("td", {}, formatNumber(row.moves)),
          replays
            ? h(
                "td",
                {},
                row.room ? h("a", { href: `#/replay/${row.room}/${row.gen}` }, t("common.replay")) : "",
              )
            : null,
        ),
      ),
    ),
  );
}

export class DailyPage {
  /**
   * @param {App} app
   * @param {string | null} date a past day's date, or null for today
   * @param {string | null} slug that day's variant slug
   */
  constructor(app, date = null, slug = null) {
    this.app = app;
    this.date = date;
    this.slug = slug;
    this.conn = app.connection();
    /** @type {HTMLElement | null} */
    this.root = null;
    /** @type {(() => void)[]} */
    this.unbinders = [];
    /** @type {Map<string, number>} leaderboard page offsets by slug */
    this.offsets = new Map();
    /** @type {{date: string, variant: string, count: number | undefined}[]} the leaderboards followed live */
    this.watching = [];
    /** @type {number | undefined} */
    this.clock = undefined;
    /** @type {number | undefined} */
    this.refreshTimer = undefined;
    /** @type {Shown} */
    this.shown = null;
    /** @type {{error: unknown} | null} why the last game could not be started */
    this.failure = null;
    /** @type {HTMLElement | null} the countdown to the next deals, while shown */
    this.closes = null;
    /** @type {{at: number | null, skew: number}} when the next deals come (server clock less ours) */
    this.next = { at: null, skew: 0 };
  }

  /** @param {HTMLElement} root */
  async mount(root) {
    this.root = root;
    root.append(this.build());
    const conn = await this.app.ready(); // a token first: answers depend on who asks
    this.unbinders.push(conn.on("frame", (frame) => this.onFrame(frame)));
    this.unbinders.push(conn.on("open", () => this.watch()));
    if (this.date) await this.showDay();
    else await this.showToday();
    this.watch();
  }

  unmount() {
    window.clearInterval(this.clock);
    window.clearTimeout(this.refreshTimer);
    this.unwatch();
    for (const unbind of this.unbinders.splice(0)) unbind();
  }

  watch() {
    for (const { date, variant } of this.watching) this.conn.send({ t: "daily_watch", date, variant });
  }

  unwatch() {
    if (!this.conn.online) return;
    for (const { date, variant } of this.watching) this.conn.send({ t: "daily_unwatch", date, variant });
  }

  /** @param {ServerFrame} frame */
  onFrame(frame) {
    if (frame.t !== "daily_update") return;
    const watched = this.watching.find((w) => w.date === frame.date && w.variant === frame.variant);
    // The answer to `daily_watch` repeats the count already shown: nothing new then.
    if (!watched || watched.count === frame.count) return;
    window.clearTimeout(this.refreshTimer);
    this.refreshTimer = window.setTimeout(() => this.refresh(), 250);
  }

  async refresh() {
    if (this.date) await this.showDay();
    else await this.showToday();
  }

  /** The page again in the active language, from what it last fetched. */
  relabel() {
    if (this.root) rerender(this.root, () => this.build());
  }

  /** Show what the page holds now. */
  draw() {
    this.root?.replaceChildren(this.build());
  }

  /** The page's content in the active language. */
  build() {
    const shown = this.shown;
    this.closes = null;
    /** @type {HTMLElement} */
    let content;
    if (shown === null) content = h("p.loading", {}, t("daily.loading"));
    else if (shown.kind === "unavailable") content = h("p", {}, t("daily.unavailable"));
    else if (shown.kind === "missing")
      content = h("p", {}, t("daily.day.missing"), " ", h("a", { href: "#/daily" }, t("daily.day.today")));
    else if (shown.kind === "today") content = this.todayContent(shown);
    else content = this.dayContent(shown);
    if (this.failure) {
      const reason = errorText(this.failure.error);
      content.prepend(h("p.error-text", { role: "alert" }, t("daily.startFailed", { reason })));
    }
    return content;
  }

  // ------------------------------------------------------------ today

  async showToday() {
    if (!this.root) return;
    const [today, archive, stats] = /** @type {[DailyToday | null, DailyDay[] | null, DailyStats | null]} */ (
      await Promise.all([
        getJSON("/api/daily"),
        getJSON("/api/daily/archive?limit=14").catch(() => []),
        getJSON("/api/daily/stats").catch(() => null),
      ])
    );
    if (!today) {
      this.shown = { kind: "unavailable" };
      this.draw();
      return;
    }
    const boards = await Promise.all(today.challenges.map((c) => this.leaderboard(c.date, c.slug)));
    this.watching = today.challenges.map((c, i) => ({
      date: c.date,
      variant: c.variant,
      count: boards[i]?.count,
    }));
    this.next = { at: today.challenges[0]?.closes_at ?? null, skew: today.now - Date.now() };
    window.clearInterval(this.clock);
    this.clock = window.setInterval(() => this.tick(), 1000);
    this.shown = { kind: "today", today, archive: archive ?? [], stats, boards };
    this.draw();
  }

  /** The countdown to the next deals, in the element `build` made last. */
  tick() {
    const next = this.next;
    if (next.at !== null && this.closes)
      this.closes.textContent = t("daily.closesIn", { time: countdown(next.at - (Date.now() + next.skew)) });
  }

  /**
   * Today's challenges, your record and the past days.
   * @param {{today: DailyToday, archive: DailyDay[], stats: DailyStats | null, boards: (DailyLeaderboard | null)[]}} shown
   */
  todayContent({ today, archive, stats, boards }) {
    this.closes = h("span", { "data-testid": "daily-closes" });
    this.tick();
    return h(
      "div.home.daily",
      {},
      h(
        "section.hero",
        {},
        h(
          "div",
          {},
          h("h1", {}, t("daily.title", { date: dayText(today.date) })),
          h("p", {}, t("daily.lead")),
        ),
        h("p.muted", {}, this.closes),
      ),
      ...today.challenges.map((challenge, i) => this.challengeCard(challenge, boards[i])),
      stats ? this.statsCard(stats) : null,
      this.archiveCard(archive),
    );
  }

  /**
   * @param {DailyChallenge} c
   * @param {DailyLeaderboard | null} board
   */
  challengeCard(c, board) {
    const variant = parseVariant(c.variant);
    const attempt = c.attempt;
    const actions = h("div.row");
    let status;
    if (!attempt) {
      status = h("p", {}, t("daily.attempt.none"));
      actions.append(
        h(
          "button",
          { type: "button", "data-testid": `play-${c.slug}`, onclick: () => this.play(c) },
          t("daily.attempt.play"),
        ),
      );
    } else if (attempt.state === "playing") {
      status = h("p", {}, t("daily.attempt.underway"));
      actions.append(
        h(
          "a.button",
          { href: `#/room/${attempt.room}`, "data-testid": `play-${c.slug}` },
          t("common.resume"),
        ),
      );
    } else {
      const r = attempt.result;
      const result = !r
        ? t("daily.attempt.finished")
        : r.won
          ? t("daily.attempt.won", { time: formatTime(r.time_ms, { tenths: true }) })
          : t("daily.attempt.found", { found: r.found });
      status = h(
        "p",
        { "data-testid": `my-result-${c.slug}` },
        h("strong", {}, result),
        attempt.rank ? ` · ${t("daily.attempt.rank", { rank: attempt.rank, players: c.players })}` : null,
      );
      const leader = board?.rows?.[0];
      if (leader?.room) {
        actions.append(
          h(
            "a.button.ghost",
            { href: `#/replay/${leader.room}/${leader.gen}`, "data-testid": `leader-replay-${c.slug}` },
            t("daily.attempt.watchLeader"),
          ),
          h(
            "button.ghost",
            { type: "button", "data-testid": `ghost-${c.slug}`, onclick: () => this.play(c, leader) },
            t("daily.attempt.ghost"),
          ),
        );
      }
      actions.append(
        h("button.ghost", { type: "button", onclick: () => this.play(c) }, t("daily.attempt.again")),
      );
    }
    return h(
      "section.panel",
      { "data-testid": `challenge-${c.slug}`, "aria-labelledby": `title-${c.slug}` },
      h("h2", { id: `title-${c.slug}` }, describeVariant(variant)),
      c.commitment
        ? h(
            "p.muted",
            {},
            ...tParts("daily.challenge.facts", {
              par: c.par ?? 0,
              players: c.players,
              commitment: h("code", { title: c.commitment }, `${c.commitment.slice(0, 12)}…`),
            }),
          )
        : h("p.muted", {}, t("daily.challenge.certifying")),
      status,
      actions,
      h("h2", { style: "margin-top:1rem" }, t("daily.leaderboard.title")),
      this.leaderboardBlock(c, board),
    );
  }

  /**
   * @param {{slug: string, attempt?: DailyAttempt | null}} c
   * @param {DailyLeaderboard | null} board
   */
  leaderboardBlock(c, board) {
    if (!board) return h("p.empty", {}, t("daily.leaderboard.none"));
    const offset = this.offsets.get(c.slug) ?? 0;
    const pager = h(
      "div.row",
      {},
      h(
        "button.ghost",
        { type: "button", disabled: offset === 0, onclick: () => this.page(c.slug, offset - PAGE_SIZE) },
        t("daily.leaderboard.previous"),
      ),
      h(
        "span.muted",
        {},
        t("daily.leaderboard.range", {
          first: board.count ? offset + 1 : 0,
          last: Math.min(board.count, offset + PAGE_SIZE),
          count: board.count,
        }),
      ),
      h(
        "button.ghost",
        {
          type: "button",
          disabled: offset + PAGE_SIZE >= board.count,
          onclick: () => this.page(c.slug, offset + PAGE_SIZE),
        },
        t("daily.leaderboard.next"),
      ),
    );
    const me = board.me;
    const mine =
      me && !board.rows.some((row) => row.user === this.conn.user)
        ? h(
            "div",
            {},
            h("p.muted", {}, t("daily.leaderboard.aroundYou", { rank: me.rank })),
            boardTable(me.rows, { me: this.conn.user }),
          )
        : null;
    return h(
      "div",
      { "data-testid": `leaderboard-${c.slug}` },
      boardTable(board.rows, {
        me: this.conn.user,
        replays: board.closed || Boolean(c.attempt?.state === "finished"),
      }),
      board.count > PAGE_SIZE ? pager : null,
      mine,
    );
  }

  /**
   * @param {string} slug
   * @param {number} offset
   */
  async page(slug, offset) {
    this.offsets.set(slug, Math.max(0, offset));
    await this.refresh();
  }

  /**
   * A page of a day's leaderboard, or null when it cannot be had.
   * @param {string} date
   * @param {string} slug
   */
  async leaderboard(date, slug) {
    const offset = this.offsets.get(slug) ?? 0;
    const board = await getJSON(
      `/api/daily/${date}/${slug}/leaderboard?offset=${offset}&limit=${PAGE_SIZE}`,
    ).catch(() => null);
    return /** @type {DailyLeaderboard | null} */ (board);
  }

  /** @param {DailyStats} stats */
  statsCard(stats) {
    /**
     * @param {string} label
     * @param {string | number} value
     * @param {string} [testid]
     */
    const item = (label, value, testid) =>
      h(
        "div.stat",
        {},
        h("small", {}, label),
        h("strong", { "data-testid": testid }, typeof value === "number" ? formatNumber(value) : value),
      );
    const best = Object.entries(stats.best_ms ?? {}).map(([variant, ms]) =>
      item(
        t("daily.record.best", { variant: describeVariant(parseVariant(variant)) }),
        formatTime(ms, { tenths: true }),
      ),
    );
    return h(
      "section.panel",
      { "data-testid": "daily-stats" },
      h("h2", {}, t("daily.record.title")),
      h(
        "div.stats",
        { style: "flex-wrap:wrap" },
        item(t("daily.record.days"), stats.days_played, "stat-days"),
        item(t("daily.record.wins"), stats.wins, "stat-wins"),
        item(t("daily.record.streak"), stats.streak, "stat-streak"),
        item(t("daily.record.longest"), stats.longest_streak, "stat-longest"),
        item(t("daily.record.winStreak"), stats.win_streak, "stat-win-streak"),
        ...best,
      ),
    );
  }

  /** @param {DailyDay[]} archive */
  archiveCard(archive) {
    return h(
      "section.panel",
      { "aria-labelledby": "archive-title" },
      h("h2", { id: "archive-title" }, t("daily.archive.title")),
      archive.length
        ? h(
            "ul.list",
            {},
            archive.map((day) =>
              h(
                "li",
                {},
                h(
                  "span",
                  {},
                  t(day.winner ? "daily.archive.rowBest" : "daily.archive.row", {
                    date: dayText(day.date, "medium"),
                    variant: describeVariant(parseVariant(day.variant)),
                    par: day.par,
                    players: day.players,
                    name: day.winner?.name ?? "",
                    result: day.winner ? resultWords(day.winner) : "",
                  }),
                ),
                h(
                  "a.button.ghost",
                  { href: `#/daily/${day.date}/${day.slug}` },
                  t("daily.leaderboard.title"),
                ),
              ),
            ),
          )
        : h("p.empty", {}, t("daily.archive.empty")),
    );
  }

  /**
   * Open a game of a challenge, against the ghost of a leaderboard row when one is given.
   * @param {DailyChallenge} challenge
   * @param {DailyRow | null} ghost
   */
  async play(challenge, ghost = null) {
    const root = this.root;
    if (!root) return;
    const buttons = [...root.querySelectorAll(`[data-testid=challenge-${challenge.slug}] button`)].filter(
      (button) => button instanceof HTMLButtonElement,
    );
    for (const button of buttons) button.disabled = true;
    this.failure = null;
    root.querySelector(":scope > * > .error-text, :scope > .error-text")?.remove();
    const note = h("p.muted", { role: "status" }, t("daily.dealing"));
    root.querySelector(`[data-testid=challenge-${challenge.slug}]`)?.append(note);
    try {
      const reply = await this.conn.request({ t: "create", kind: "daily", variant: challenge.variant });
      const suffix = ghost ? `/ghost/${ghost.room}/${ghost.gen}/${ghost.seat ?? 0}` : "";
      this.app.navigate(`#/room/${reply.room}${suffix}`);
    } catch (error) {
      note.remove();
      for (const button of buttons) button.disabled = false;
      this.failure = { error };
      root.firstElementChild?.prepend(
        h("p.error-text", { role: "alert" }, t("daily.startFailed", { reason: errorText(error) })),
      );
    }
  }

  // ------------------------------------------------------------ one day

  async showDay() {
    const date = this.date;
    const slug = this.slug;
    if (!this.root) return;
    const board = date !== null && slug !== null ? await this.leaderboard(date, slug) : null;
    if (!board || date === null || slug === null) {
      this.shown = { kind: "missing" };
      this.draw();
      return;
    }
    this.watching = board.closed ? [] : [{ date: board.date, variant: board.variant, count: board.count }];
    const archive = /** @type {DailyDay[] | null} */ (
      board.closed ? await getJSON("/api/daily/archive?limit=100").catch(() => []) : []
    );
    const day = (archive ?? []).find((d) => d.date === date && d.slug === slug) ?? null;
    this.shown = { kind: "day", date, slug, board, day };
    this.draw();
  }

  /**
   * One day's leaderboard, with its deal once the day is closed.
   * @param {{date: string, slug: string, board: DailyLeaderboard, day: DailyDay | null}} shown
   */
  dayContent({ slug, board, day }) {
    return h(
      "section.game",
      {},
      titleBar(
        t("daily.day.title", {
          date: dayText(board.date),
          variant: describeVariant(parseVariant(board.variant)),
        }),
        t(board.closed ? "daily.day.closed" : "daily.day.open"),
        h("a.button.ghost", { href: "#/daily" }, t("daily.day.back")),
      ),
      day
        ? h(
            "p.muted",
            {},
            ...tParts("daily.day.deal", {
              par: day.par,
              seed: h("code", {}, day.seed),
              commitment: h("code", { title: day.commitment }, `${day.commitment.slice(0, 16)}…`),
            }),
          )
        : null,
      h("section.panel", {}, this.leaderboardBlock({ slug, attempt: null }, board)),
    );
  }
}
