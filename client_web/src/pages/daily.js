// @ts-check
/**
 * Daily challenges: today's deals with your attempt, your rank and the leaderboards
 * (updated live as players finish), your streaks, and the archive of past days with
 * their revealed deals and replays.
 *
 * Routes: `#/daily` (today) and `#/daily/DATE/SLUG` (one day's leaderboard).
 */

import { describeVariant, parseVariant } from "../rules.js";
import { errorText, formatTime, getJSON, h } from "../ui.js";

/** @import { App } from "../main.js" */
/** @import { DailyAttempt, DailyChallenge, DailyDay, DailyLeaderboard, DailyRow, DailyStats, DailyToday,
 *   ServerFrame } from "../wire.js" */

const PAGE_SIZE = 20;

/**
 * Words for a leaderboard row's result.
 * @param {{won: boolean, time_ms: number | null, found: number}} row
 */
export function resultWords(row) {
  return row.won ? `won in ${formatTime(row.time_ms, { tenths: true })}` : `${row.found} cards home`;
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
  if (!rows.length) return h("p.empty", {}, "No one has finished yet.");
  return h(
    "table.results.leaderboard",
    {},
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Rank", "Player", "Result", "Moves", replays ? "Replay" : null]
          .filter((x) => x !== null)
          .map((t) => h("th", { scope: "col" }, t)),
      ),
    ),
    h(
      "tbody",
      {},
      rows.map((row) =>
        h(
          `tr${row.user === me ? ".me" : ""}`,
          { "data-testid": "leaderboard-row" },
          h("td", {}, String(row.rank)),
          h("td", {}, row.name),
          h("td", {}, resultWords(row)),
          h("td", {}, String(row.moves)),
          replays
            ? h("td", {}, row.room ? h("a", { href: `#/replay/${row.room}/${row.gen}` }, "Replay") : "")
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
  }

  /** @param {HTMLElement} root */
  async mount(root) {
    this.root = root;
    root.append(h("p.loading", {}, "Loading the daily challenges…"));
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

  // ------------------------------------------------------------ today

  async showToday() {
    const root = this.root;
    if (!root) return;
    const [today, archive, stats] = /** @type {[DailyToday | null, DailyDay[] | null, DailyStats | null]} */ (
      await Promise.all([
        getJSON("/api/daily"),
        getJSON("/api/daily/archive?limit=14").catch(() => []),
        getJSON("/api/daily/stats").catch(() => null),
      ])
    );
    if (!today) {
      root.replaceChildren(h("p", {}, "Daily challenges are not available on this server."));
      return;
    }
    const boards = await Promise.all(today.challenges.map((c) => this.leaderboard(c.date, c.slug)));
    this.watching = today.challenges.map((c, i) => ({
      date: c.date,
      variant: c.variant,
      count: boards[i]?.count,
    }));
    const skew = today.now - Date.now();
    const closes = h("span", { "data-testid": "daily-closes" });
    const tickClose = () => {
      const next = today.challenges[0]?.closes_at;
      if (next) closes.textContent = `New deals in ${countdown(next - (Date.now() + skew))}`;
    };
    window.clearInterval(this.clock);
    this.clock = window.setInterval(tickClose, 1000);
    tickClose();
    root.replaceChildren(
      h(
        "div.home.daily",
        {},
        h(
          "section.hero",
          {},
          h(
            "div",
            {},
            h("h1", {}, `Daily challenge · ${today.date}`),
            h(
              "p",
              {},
              "One deal per variant, the same for everyone, certified winnable. One ranked attempt each: no undo, no hints, 30 minutes.",
            ),
          ),
          h("p.muted", {}, closes),
        ),
        ...today.challenges.map((challenge, i) => this.challengeCard(challenge, boards[i])),
        stats ? this.statsCard(stats) : null,
        this.archiveCard(archive ?? []),
      ),
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
      status = h("p", {}, "You have not played this one yet.");
      actions.append(
        h(
          "button",
          { type: "button", "data-testid": `play-${c.slug}`, onclick: () => this.play(c) },
          "Play today's deal",
        ),
      );
    } else if (attempt.state === "playing") {
      status = h("p", {}, "Your attempt is under way: the clock is running.");
      actions.append(
        h("a.button", { href: `#/room/${attempt.room}`, "data-testid": `play-${c.slug}` }, "Resume"),
      );
    } else {
      const r = attempt.result;
      const rank = attempt.rank ? ` · rank ${attempt.rank} of ${c.players}` : "";
      status = h(
        "p",
        { "data-testid": `my-result-${c.slug}` },
        h(
          "strong",
          {},
          r ? `You ${r.won ? resultWords({ ...r, won: true }) : `got ${r.found} cards home`}` : "Finished",
        ),
        rank,
      );
      const leader = board?.rows?.[0];
      if (leader?.room) {
        actions.append(
          h(
            "a.button.ghost",
            { href: `#/replay/${leader.room}/${leader.gen}`, "data-testid": `leader-replay-${c.slug}` },
            "Watch the leader",
          ),
          h(
            "button.ghost",
            { type: "button", "data-testid": `ghost-${c.slug}`, onclick: () => this.play(c, leader) },
            "Race the leader's ghost",
          ),
        );
      }
      actions.append(
        h("button.ghost", { type: "button", onclick: () => this.play(c) }, "Play again (unranked)"),
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
            `Par ${c.par} moves · ${c.players} player${c.players === 1 ? "" : "s"} · deal commitment `,
            h("code", { title: c.commitment }, `${c.commitment.slice(0, 12)}…`),
          )
        : h("p.muted", {}, "Today's deal is being certified; it is ready in a moment."),
      status,
      actions,
      h("h2", { style: "margin-top:1rem" }, "Leaderboard"),
      this.leaderboardBlock(c, board),
    );
  }

  /**
   * @param {{slug: string, attempt?: DailyAttempt | null}} c
   * @param {DailyLeaderboard | null} board
   */
  leaderboardBlock(c, board) {
    if (!board) return h("p.empty", {}, "No leaderboard yet.");
    const offset = this.offsets.get(c.slug) ?? 0;
    const pager = h(
      "div.row",
      {},
      h(
        "button.ghost",
        { type: "button", disabled: offset === 0, onclick: () => this.page(c.slug, offset - PAGE_SIZE) },
        "Previous",
      ),
      h(
        "span.muted",
        {},
        `${board.count ? offset + 1 : 0}–${Math.min(board.count, offset + PAGE_SIZE)} of ${board.count}`,
      ),
      h(
        "button.ghost",
        {
          type: "button",
          disabled: offset + PAGE_SIZE >= board.count,
          onclick: () => this.page(c.slug, offset + PAGE_SIZE),
        },
        "Next",
      ),
    );
    const me = board.me;
    const mine =
      me && !board.rows.some((row) => row.user === this.conn.user)
        ? h(
            "div",
            {},
            h("p.muted", {}, `Around you (rank ${me.rank})`),
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
      h("div.stat", {}, h("small", {}, label), h("strong", { "data-testid": testid }, String(value)));
    const best = Object.entries(stats.best_ms ?? {}).map(([variant, ms]) =>
      item(`Best · ${describeVariant(parseVariant(variant))}`, formatTime(ms, { tenths: true })),
    );
    return h(
      "section.panel",
      { "data-testid": "daily-stats" },
      h("h2", {}, "Your record"),
      h(
        "div.stats",
        { style: "flex-wrap:wrap" },
        item("Days played", stats.days_played, "stat-days"),
        item("Wins", stats.wins, "stat-wins"),
        item("Streak", stats.streak, "stat-streak"),
        item("Longest streak", stats.longest_streak, "stat-longest"),
        item("Win streak", stats.win_streak, "stat-win-streak"),
        ...best,
      ),
    );
  }

  /** @param {DailyDay[]} archive */
  archiveCard(archive) {
    return h(
      "section.panel",
      { "aria-labelledby": "archive-title" },
      h("h2", { id: "archive-title" }, "Past days"),
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
                  `${day.date} · ${describeVariant(parseVariant(day.variant))} · par ${day.par} · ${day.players} played${day.winner ? ` · best: ${day.winner.name}, ${resultWords(day.winner)}` : ""}`,
                ),
                h("a.button.ghost", { href: `#/daily/${day.date}/${day.slug}` }, "Leaderboard"),
              ),
            ),
          )
        : h("p.empty", {}, "The archive fills as days close."),
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
    const note = h("p.muted", { role: "status" }, "Dealing…");
    root.querySelector(`[data-testid=challenge-${challenge.slug}]`)?.append(note);
    try {
      const reply = await this.conn.request({ t: "create", kind: "daily", variant: challenge.variant });
      const suffix = ghost ? `/ghost/${ghost.room}/${ghost.gen}/${ghost.seat ?? 0}` : "";
      this.app.navigate(`#/room/${reply.room}${suffix}`);
    } catch (error) {
      note.remove();
      for (const button of buttons) button.disabled = false;
      root.prepend(h("p.error-text", { role: "alert" }, `Could not start: ${errorText(error)}`));
    }
  }

  // ------------------------------------------------------------ one day

  async showDay() {
    const root = this.root;
    const date = this.date;
    const slug = this.slug;
    if (!root) return;
    const board = date !== null && slug !== null ? await this.leaderboard(date, slug) : null;
    if (!board || date === null || slug === null) {
      root.replaceChildren(h("p", {}, "No such day. ", h("a", { href: "#/daily" }, "Today's challenges")));
      return;
    }
    this.watching = board.closed ? [] : [{ date: board.date, variant: board.variant, count: board.count }];
    const archive = /** @type {DailyDay[] | null} */ (
      board.closed ? await getJSON("/api/daily/archive?limit=100").catch(() => []) : []
    );
    const day = (archive ?? []).find((d) => d.date === date && d.slug === slug);
    const challenge = { slug, date };
    root.replaceChildren(
      h(
        "section.game",
        {},
        h(
          "div.statusbar",
          {},
          h(
            "div",
            {},
            h(
              "h1",
              { style: "margin:0;font-size:1.2rem" },
              `Daily challenge · ${board.date} · ${describeVariant(parseVariant(board.variant))}`,
            ),
            h("span.muted", {}, board.closed ? "Closed" : "Open today"),
          ),
          h("a.button.ghost", { href: "#/daily" }, "Today"),
        ),
        day
          ? h(
              "p.muted",
              {},
              `Par ${day.par} · seed `,
              h("code", {}, day.seed),
              ` · commitment `,
              h("code", { title: day.commitment }, `${day.commitment.slice(0, 16)}…`),
            )
          : null,
        h("section.panel", {}, this.leaderboardBlock({ ...challenge, attempt: null }, board)),
      ),
    );
  }
}
