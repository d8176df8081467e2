// @ts-check
/**
 * One tournament (`#/t/ID`, the address is its invite): settings, registration with
 * Enter and Withdraw, entrants, standings, every round with its results and its deal's
 * commitment (and seed once revealed), the organizer's tools and the log; live from
 * `tournament` frames (`tournament_watch` while mounted). During a heat: *Join heat N*
 * for its entrants, *Watch heat N live* for everyone, and the heat's leaders, read as a
 * spectator of its room. Once over: the archive (`GET /api/tournaments/ID/archive`).
 */

import { applyFrame, newBoard } from "../game.js";
import { ServerError } from "../net.js";
import { describeVariant, parseVariant } from "../rules.js";
import { liveRanking, ReachedTimes } from "../ranking.js";
import {
  isEntrant,
  liveHeat,
  pointsText,
  rankText,
  replayHash,
  resultText,
  sharedRanks,
} from "../tournament-data.js";
import { errorText, formatTime, getJSON, h, statusWord } from "../ui.js";
import { foundationCount } from "../view.js";
import { inviteField, verifyDeal } from "./room-parts.js";
import { stateWord } from "./tournaments.js";

/** @import { Board } from "../game.js" */
/** @import { App } from "../main.js" */
/** @import { LiveRacer } from "../ranking.js" */
/** @import { BoardStatus, RoomFrame, ServerFrame, Tournament, TournamentActionName, TournamentRound } from "../wire.js" */

/** How many racers the leaders panel shows. */
const LEADERS_SHOWN = 5;

/** @type {Record<string, string>} */
const ROUND_WORDS = {
  scheduled: "scheduled",
  lobby: "room open: entrants take their seats",
  racing: "under way",
  finished: "finished",
  cancelled: "cancelled",
  open: "open today",
  closed: "closed",
};

/**
 * Put `children` in `node` in place of what it held (null: nothing).
 * @param {HTMLElement} node
 * @param {...(Node | string | null)} children
 */
function fill(node, ...children) {
  node.replaceChildren(...children.flatMap((child) => (child === null ? [] : [child])));
}

/** @param {number} ms */
const when = (ms) => new Date(ms).toLocaleString([], { dateStyle: "medium", timeStyle: "short" });

/**
 * The tournament's format and settings in a line.
 * @param {Tournament} t
 */
function settingsText(t) {
  const variants = t.variants.map((v) => describeVariant(parseVariant(v))).join(" and ");
  if (t.format === "series" && t.series)
    return `Series over the daily deals, ${t.series.from} to ${t.series.to} · ${variants}`;
  const heats = t.heats;
  if (!heats) return variants;
  return (
    `${heats.count} heat${heats.count === 1 ? "" : "s"} · ${variants} · first at ${when(heats.start_at)} · ` +
    `${heats.pause} s pause · ${formatTime(heats.time_limit * 1000)} time limit`
  );
}

/**
 * A table with a header row.
 * @param {string[]} heads
 * @param {HTMLElement[]} rows
 * @param {Record<string, string>} [props]
 */
function table(heads, rows, props = {}) {
  return h(
    "div.table-wrap",
    {},
    h(
      "table.results.t-table",
      props,
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          heads.map((text) => h("th", { scope: "col" }, text)),
        ),
      ),
      h("tbody", {}, rows),
    ),
  );
}

export class TournamentPage {
  /**
   * @param {App} app
   * @param {string} id
   */
  constructor(app, id) {
    this.app = app;
    this.id = id;
    this.conn = app.connection();
    /** @type {Tournament | null} */
    this.t = null;
    /** @type {Tournament | null} the archive, once the tournament is over */
    this.archive = null;
    this.archiveAsked = false;
    /** @type {(() => void)[]} */
    this.unbinders = [];
    /** @type {Set<string>} disclosures the reader opened, kept open across renders */
    this.opened = new Set();
    // The heat watched as a spectator for the leaders panel.
    /** @type {string | null} */
    this.heatRoom = null;
    /** Whether this page's spectator join of `heatRoom` was answered (it is in the room). */
    this.inHeat = false;
    this.mounted = false;
    /** @type {RoomFrame | null} */
    this.heatFrame = null;
    /** @type {Map<number, Board>} */
    this.boards = new Map();
    /** @type {Map<number, {found: number, down: number, moves: number, status: BoardStatus}>} */
    this.progress = new Map();
    /** @type {Map<number, number>} when (server ms) this page saw each board end */
    this.doneAt = new Map();
    /** When this page saw each board reach its count of cards home. */
    this.reached = new ReachedTimes();
    /** @type {string | null} a heat this entrant may not watch yet (its own board is in play) */
    this.ownRace = null;
    /** @type {number | undefined} */
    this.leadersTimer = undefined;
    /** @type {number | undefined} */
    this.clock = undefined;
    this.title = h("h1", { id: "t-title", style: "margin:0;font-size:1.4rem" }, "Loading the tournament…");
    this.message = h("p.message", { role: "status", "data-testid": "t-message" });
    this.header = h("section.panel", { "aria-labelledby": "t-title", "data-testid": "t-header" }, this.title);
    this.heatNow = h("section.panel.heat-now", {
      hidden: true,
      "data-testid": "heat-now",
      "aria-label": "Heat now",
    });
    this.leaders = h("div", { "data-testid": "leaders" });
    this.registration = h("section.panel", { hidden: true, "aria-labelledby": "reg-title" });
    this.tools = h("section.panel", {
      hidden: true,
      "aria-labelledby": "tools-title",
      "data-testid": "organizer",
    });
    this.standings = h("section.panel", { hidden: true, "aria-labelledby": "standings-title" });
    this.rounds = h("section.panel", { hidden: true, "aria-labelledby": "rounds-title" });
    this.log = h("section.panel", { hidden: true, "aria-labelledby": "log-title" });
  }

  /** @param {HTMLElement} root */
  mount(root) {
    root.append(
      h(
        "div.tournament",
        { "data-testid": "tournament-page" },
        this.header,
        this.message,
        this.heatNow,
        this.standings,
        this.registration,
        this.tools,
        this.rounds,
        this.log,
      ),
    );
    this.unbinders.push(this.conn.on("frame", (frame) => this.onFrame(frame)));
    this.unbinders.push(
      this.conn.on("hello", () => {
        this.inHeat = false; // a new connection is in no room yet
        this.watch();
        if (this.heatRoom) this.joinHeat(this.heatRoom);
      }),
    );
    this.mounted = true;
    if (this.conn.greeted) this.watch();
    this.clock = window.setInterval(() => this.tick(), 1000);
  }

  unmount() {
    this.mounted = false;
    window.clearInterval(this.clock);
    window.clearTimeout(this.leadersTimer);
    for (const unbind of this.unbinders.splice(0)) unbind();
    if (this.conn.online) {
      this.conn.send({ t: "tournament_unwatch", tournament: this.id });
      // Only a room this page is in: a `leave` otherwise would be refused, and the
      // refusal would reach the heat's own page (a racer's, opened from here).
      if (this.heatRoom && this.inHeat) this.conn.send({ t: "leave", room: this.heatRoom });
    }
  }

  async watch() {
    try {
      await this.conn.request({ t: "tournament_watch", tournament: this.id });
    } catch (error) {
      if (!(error instanceof ServerError)) return; // disconnected: the next `hello` watches again
      if (error.code === "no_room") {
        this.title.textContent = "No such tournament";
        this.header.append(
          h(
            "p",
            {},
            "This tournament does not exist or has expired. ",
            h("a", { href: "#/tournaments" }, "Tournaments"),
          ),
        );
      } else this.say(error.message);
    }
  }

  /** @param {string} text */
  say(text) {
    this.message.textContent = text;
  }

  /**
   * Send an entrant's or the organizer's request; its answer (a `tournament`) renders.
   * @param {"tournament_enter" | "tournament_withdraw" | "tournament_action"} t
   * @param {{action?: TournamentActionName, user?: string}} [extra]
   */
  async ask(t, extra = {}) {
    this.say("");
    try {
      if (t === "tournament_action" && extra.action)
        await this.conn.request({
          t,
          tournament: this.id,
          action: extra.action,
          ...(extra.user ? { user: extra.user } : {}),
        });
      else if (t !== "tournament_action") await this.conn.request({ t, tournament: this.id });
    } catch (error) {
      this.say(errorText(error));
    }
  }

  // ------------------------------------------------------------ frames

  /** @param {ServerFrame} frame */
  onFrame(frame) {
    if (frame.t === "tournament") {
      if (frame.tournament.id !== this.id) return;
      this.t = frame.tournament;
      this.render();
      return;
    }
    if (!("room" in frame) || frame.room !== this.heatRoom) return;
    switch (frame.t) {
      case "room":
        this.heatFrame = frame;
        this.renderLeadersSoon();
        break;
      case "board":
      case "diff": {
        if (frame.audience !== "spectator") break;
        const board = this.boards.get(frame.seat) ?? newBoard(frame.seat, "spectator");
        const { board: next, gap } = applyFrame(board, frame);
        if (gap) {
          this.joinHeat(frame.room);
          break;
        }
        if (board.status === "playing" && next.status !== "playing")
          this.doneAt.set(frame.seat, this.conn.now());
        this.boards.set(frame.seat, next);
        this.reached.note(frame.seat, this.foundOf(frame.seat), this.conn.now());
        this.renderLeadersSoon();
        break;
      }
      case "progress":
        for (const [seat, found, down, moves, status] of frame.boards) {
          if (status !== "playing" && this.progress.get(seat)?.status === "playing" && !this.doneAt.has(seat))
            this.doneAt.set(seat, this.conn.now());
          this.progress.set(seat, { found, down, moves, status });
          this.reached.note(seat, this.foundOf(seat), this.conn.now());
        }
        this.renderLeadersSoon();
        break;
      default:
        break;
    }
  }

  /** Follow the heat under way as a spectator (for its leaders), or stop following. */
  followHeat() {
    const heat = this.t ? liveHeat(this.t) : null;
    const room = heat?.room ?? null;
    if (room === this.heatRoom) return;
    this.leaveHeat();
    if (room && room !== this.ownRace) this.joinHeat(room);
  }

  /** @param {string} room */
  async joinHeat(room) {
    if (room !== this.heatRoom) {
      this.heatRoom = room;
      this.heatFrame = null;
      this.boards.clear();
      this.progress.clear();
      this.doneAt.clear();
      this.reached.clear();
    }
    const since = [...this.boards.values()]
      .filter((b) => b.ready)
      .map((b) => /** @type {[number, number, number]} */ ([b.seat, b.epoch, b.off]));
    try {
      await this.conn.request({ t: "join", room, as: "spectator", ...(since.length ? { since } : {}) });
      if (this.mounted && room === this.heatRoom) this.inHeat = true;
      else if (this.mounted) this.conn.send({ t: "leave", room }); // followed another room since
    } catch (error) {
      // Answered after this page went (to the heat's own page, say): nothing to do.
      if (!this.mounted || room !== this.heatRoom) return;
      if (error instanceof ServerError && error.code === "own_race") {
        this.ownRace = room;
        this.leaveHeat();
        this.render();
      }
    }
  }

  leaveHeat() {
    if (this.heatRoom && this.inHeat && this.conn.online) this.conn.send({ t: "leave", room: this.heatRoom });
    this.heatRoom = null;
    this.inHeat = false;
    this.heatFrame = null;
    this.boards.clear();
    this.progress.clear();
  }

  // ------------------------------------------------------------ rendering

  render() {
    const t = this.t;
    if (!t) return;
    const over = t.state === "finished" || t.state === "cancelled";
    if (over && !this.archiveAsked) this.loadArchive();
    // An entrant whose board in a heat is done may watch it: try again on every change.
    if (this.ownRace && liveHeat(t)?.room !== this.ownRace) this.ownRace = null;
    this.followHeat();
    this.renderHeader(t, over);
    this.renderHeatNow(t);
    this.renderRegistration(t, over);
    this.renderTools(t, over);
    this.renderStandings(t, over);
    this.renderRounds(this.archive ?? t, over);
    this.renderLog(t);
  }

  async loadArchive() {
    this.archiveAsked = true;
    try {
      this.archive = /** @type {Tournament | null} */ (
        await getJSON(`/api/tournaments/${encodeURIComponent(this.id)}/archive`)
      );
      if (this.t) this.renderRounds(this.archive ?? this.t, true);
    } catch {
      this.archiveAsked = false; // not over yet for the server: the next frame asks again
    }
  }

  /**
   * @param {Tournament} t
   * @param {boolean} over
   */
  renderHeader(t, over) {
    this.title.textContent = t.name;
    const link = `${window.location.origin}${window.location.pathname}#/t/${t.id}`;
    const created = window.sessionStorage.getItem("klondike.created") === t.id;
    fill(
      this.header,
      h(
        "div.row",
        { style: "justify-content:space-between" },
        this.title,
        h(
          "span.badge",
          { "data-testid": "t-state" },
          over ? `${stateWord(t.state)} · archive` : stateWord(t.state),
        ),
      ),
      h("p.muted", { "data-testid": "t-settings" }, settingsText(t)),
      h(
        "p.muted",
        {},
        `Organized by ${t.organizer.name} · ${t.public ? "public (listed)" : "unlisted: reachable by its link only"} · up to ${t.cap} entrants`,
      ),
      created ? h("p", { "data-testid": "t-created" }, "Your tournament is ready. Share its link:") : null,
      inviteField(link, "t-invite"),
      h("p", {}, h("a", { href: "#/tournaments" }, "← Tournaments")),
    );
  }

  /** @param {Tournament} t */
  renderHeatNow(t) {
    const heat = liveHeat(t);
    this.heatNow.hidden = !heat;
    if (!heat || !heat.room) return;
    const entrant = isEntrant(t, this.conn.user);
    const startText =
      heat.state === "lobby" && heat.start_at
        ? h("span", { "data-testid": "heat-starts", "data-at": String(heat.start_at) }, "")
        : h("span", {}, "Under way");
    const action = entrant
      ? h(
          "a.button.big",
          { href: `#/room/${heat.room}`, "data-testid": "join-heat" },
          `Join heat ${heat.round}`,
        )
      : null;
    const watch = h(
      `a.button${entrant ? ".ghost" : ".big"}`,
      { href: `#/watch/${heat.room}`, "data-testid": "watch-heat" },
      `Watch heat ${heat.round} live`,
    );
    this.heatNow.replaceChildren(
      h("h2", {}, `${heat.label}: ${heat.state === "lobby" ? "its room is open" : "racing now"}`),
      h(
        "p.muted",
        {},
        startText,
        entrant ? " · your seat is waiting for you: you are away until you join" : "",
      ),
      h("div.row", {}, action, watch),
      this.leaders,
    );
    this.tick();
    this.renderLeaders();
  }

  renderLeadersSoon() {
    if (this.leadersTimer !== undefined) return;
    this.leadersTimer = window.setTimeout(() => {
      this.leadersTimer = undefined;
      this.renderLeaders();
    }, 250);
  }

  /**
   * Cards home on board `seat` of the heat as this page knows it (the further of its
   * watched view and its progress).
   * @param {number} seat
   */
  foundOf(seat) {
    const board = this.boards.get(seat);
    return Math.max(this.progress.get(seat)?.found ?? 0, board?.ready ? foundationCount(board.view) : 0);
  }

  /** The heat's racers as this page sees them, best first, with their ranks. */
  racers() {
    const room = this.heatFrame;
    if (!room) return [];
    const now = this.conn.now();
    /** @type {LiveRacer[]} */
    const racers = [];
    for (const seat of room.seats) {
      if (!seat) continue;
      const board = this.boards.get(seat.seat);
      const p = this.progress.get(seat.seat);
      const found = this.foundOf(seat.seat);
      this.reached.note(seat.seat, found, now);
      racers.push({
        seat: seat.seat,
        name: seat.name,
        found,
        moves: Math.max(p?.moves ?? 0, board?.moves ?? 0),
        status: board?.ready ? board.status : (p?.status ?? "playing"),
        doneAt: this.doneAt.get(seat.seat) ?? null,
        foundAt: this.reached.at(seat.seat, found),
      });
    }
    return liveRanking(racers);
  }

  renderLeaders() {
    const heat = this.t ? liveHeat(this.t) : null;
    if (!heat?.room) return;
    if (this.ownRace === heat.room) {
      this.leaders.replaceChildren(
        h("p.muted", {}, "Join your heat to race; once your board is done you can watch the others here."),
      );
      return;
    }
    const racers = this.racers();
    if (!racers.length || heat.state === "lobby" || this.heatFrame?.state === "lobby") {
      const seated = this.heatFrame?.seats.filter((s) => s !== null) ?? [];
      const here = seated.filter((s) => s.online).length;
      this.leaders.replaceChildren(
        h(
          "p.muted",
          {},
          seated.length
            ? `${here} of ${seated.length} racers are in the room.`
            : "Waiting for the heat's room…",
        ),
      );
      return;
    }
    const shared = sharedRanks(racers);
    const rows = racers
      .slice(0, LEADERS_SHOWN)
      .map((r, i) =>
        h(
          "tr",
          { "data-testid": `leader-${i}` },
          h("td", {}, rankText(r.rank, shared)),
          h("td", {}, r.name),
          h("td", {}, `${r.found}/52`),
          h("td", {}, String(r.moves)),
          h("td", {}, statusWord(r.status)),
        ),
      );
    const done = racers.filter((r) => r.status !== "playing").length;
    this.leaders.replaceChildren(
      h("h3", { id: "leaders-title" }, "Leaders"),
      table(["#", "Racer", "Cards home", "Moves", "Status"], rows, { "aria-labelledby": "leaders-title" }),
      h(
        "p.muted",
        {},
        `${racers.length} racing · ${done} finished · `,
        h("a", { href: `#/watch/${heat.room}`, "data-testid": "follow-leader" }, "Follow the leader →"),
      ),
    );
  }

  /**
   * @param {Tournament} t
   * @param {boolean} over
   */
  renderRegistration(t, over) {
    const me = this.conn.user;
    const entered = isEntrant(t, me);
    const organizer = t.organizer.user === me;
    const open = t.registration === "open" && !over;
    const status = open
      ? `Registration is open until ${when(t.closes_at)}.`
      : t.opens_at > Date.now() && !over
        ? `Registration opens ${when(t.opens_at)}.`
        : "Registration is closed.";
    const button = open
      ? entered
        ? h(
            "button.ghost",
            { type: "button", "data-testid": "withdraw", onclick: () => this.ask("tournament_withdraw") },
            "Withdraw",
          )
        : h(
            "button",
            {
              type: "button",
              "data-testid": "enter",
              disabled: t.entrants.length >= t.cap,
              onclick: () => this.ask("tournament_enter"),
            },
            t.entrants.length >= t.cap ? "Full" : "Enter",
          )
      : null;
    const entrants = h(
      "ul.list",
      { "data-testid": "entrants" },
      t.entrants.length
        ? t.entrants.map((e) =>
            h(
              `li${e.user === me ? ".me" : ""}`,
              {},
              h("span", {}, e.name, e.user === me ? " (you)" : ""),
              organizer && !over
                ? h(
                    "button.ghost",
                    {
                      type: "button",
                      "data-testid": `remove-${e.name}`,
                      "aria-label": `Remove ${e.name}`,
                      onclick: () => {
                        if (
                          window.confirm(`Remove ${e.name} from the tournament? Their results stop counting.`)
                        )
                          this.ask("tournament_action", { action: "remove", user: e.user });
                      },
                    },
                    "Remove",
                  )
                : null,
            ),
          )
        : [h("li.empty", {}, "No entrants yet.")],
    );
    this.registration.hidden = false;
    fill(
      this.registration,
      h("h2", { id: "reg-title" }, `Entrants ${t.entrants.length}/${t.cap}`),
      h("p", { "data-testid": "registration" }, status, entered ? " You are entered." : ""),
      button ? h("div.row", {}, button) : null,
      entrants,
    );
  }

  /**
   * @param {Tournament} t
   * @param {boolean} over
   */
  renderTools(t, over) {
    const organizer = t.organizer.user === this.conn.user;
    this.tools.hidden = !organizer || over;
    if (this.tools.hidden) return;
    const waiting =
      t.format === "heats" ? t.rounds.find((r) => r.state === "scheduled" || r.state === "lobby") : undefined;
    const racing = t.rounds.some((r) => r.state === "racing");
    const windowOpen = Date.now() < t.closes_at;
    this.tools.replaceChildren(
      h("h2", { id: "tools-title" }, "Organizer"),
      h(
        "div.row",
        {},
        t.registration === "open"
          ? h(
              "button.ghost",
              {
                type: "button",
                "data-testid": "close-registration",
                onclick: () => this.ask("tournament_action", { action: "close" }),
              },
              "Close registration",
            )
          : windowOpen && t.state === "upcoming"
            ? h(
                "button.ghost",
                {
                  type: "button",
                  "data-testid": "open-registration",
                  onclick: () => this.ask("tournament_action", { action: "open" }),
                },
                "Open registration",
              )
            : null,
        waiting && !racing
          ? h(
              "button",
              {
                type: "button",
                "data-testid": "start-heat",
                onclick: () => this.ask("tournament_action", { action: "start_heat" }),
              },
              `Start ${waiting.label.toLowerCase()} now`,
            )
          : null,
        h(
          "button.ghost.danger",
          {
            type: "button",
            "data-testid": "cancel-tournament",
            onclick: () => {
              if (
                window.confirm(
                  `Cancel “${t.name}”? A heat under way ends now and is not scored. This cannot be undone.`,
                )
              )
                this.ask("tournament_action", { action: "cancel" });
            },
          },
          "Cancel the tournament",
        ),
      ),
      h("p.muted", {}, "Every action is logged below, with its time."),
    );
  }

  /**
   * @param {Tournament} t
   * @param {boolean} over
   */
  renderStandings(t, over) {
    this.standings.hidden = false;
    const shared = sharedRanks(t.standings);
    const me = this.conn.user;
    const rows = t.standings.map((s) =>
      h(
        `tr${s.user === me ? ".me" : ""}`,
        { "data-testid": "standing" },
        h("td", {}, rankText(s.rank, shared)),
        h("td", {}, s.name),
        h("td", {}, pointsText(s.points)),
        h("td", {}, String(s.wins)),
        h("td", {}, String(s.rounds)),
      ),
    );
    fill(
      this.standings,
      h("h2", { id: "standings-title" }, over ? "Final standings" : "Standings"),
      rows.length
        ? table(["Rank", "Entrant", "Points", "Wins", "Rounds"], rows, { "data-testid": "standings" })
        : h("p.empty", {}, "No entrants yet."),
      shared.size ? h("p.muted", {}, "=: a shared rank (equal points, wins and rounds played).") : null,
    );
  }

  /**
   * @param {Tournament} t
   * @param {boolean} over
   */
  renderRounds(t, over) {
    this.rounds.hidden = false;
    this.rounds.replaceChildren(
      h("h2", { id: "rounds-title" }, over ? "Archive: every round, its deal and its replays" : "Rounds"),
      ...t.rounds.map((round) => this.roundSection(t, round)),
    );
  }

  /**
   * @param {Tournament} t
   * @param {TournamentRound} round
   */
  roundSection(t, round) {
    const me = this.conn.user;
    const shared = sharedRanks(round.results.map((r) => ({ rank: r.place })));
    const rows = round.results.map((r) =>
      h(
        `tr${r.user === me ? ".me" : ""}`,
        {},
        h("td", {}, rankText(r.place, shared)),
        h("td", {}, r.name),
        h("td", {}, pointsText(r.points)),
        h("td", {}, resultText(r)),
        h("td", {}, String(r.moves)),
        h(
          "td",
          {},
          replayHash(r) && round.state !== "racing"
            ? h("a", { href: replayHash(r) ?? "#", "aria-label": `Replay of ${r.name}'s game` }, "Replay")
            : "",
        ),
      ),
    );
    const words = ROUND_WORDS[round.state] ?? round.state;
    const key = `verify-${round.round}`;
    const verify = round.seed
      ? verifyDeal(round.seed, round.commitment, t.format === "heats" ? "race" : "daily")
      : round.commitment
        ? h(
            "details.verify",
            {},
            h("summary", {}, "The deal's commitment"),
            h(
              "p.muted",
              {},
              "The deal is fixed: its fingerprint (SHA-256) is published now, its seed once the round is over.",
            ),
            h("code.commitment", {}, round.commitment),
          )
        : null;
    if (verify instanceof HTMLDetailsElement) {
      verify.open = this.opened.has(key);
      verify.addEventListener("toggle", () => (verify.open ? this.opened.add(key) : this.opened.delete(key)));
    }
    return h(
      "section.round",
      { "data-testid": `round-${round.round}`, "aria-labelledby": `round-title-${round.round}` },
      h("h3", { id: `round-title-${round.round}` }, round.label),
      h(
        "p.muted",
        {},
        words,
        round.start_at
          ? ` · ${round.state === "scheduled" || round.state === "lobby" ? "starts" : "started"} ${when(round.start_at)}`
          : "",
        round.certified ? " · certified winnable deal" : "",
      ),
      rows.length
        ? table(["Place", "Entrant", "Points", "Result", "Moves", "Replay"], rows, {
            "data-testid": `results-${round.round}`,
          })
        : round.state === "finished" || round.state === "closed"
          ? h("p.empty", {}, "No entrant played this round.")
          : null,
      verify,
    );
  }

  /** @param {Tournament} t */
  renderLog(t) {
    this.log.hidden = !t.log.length;
    this.log.replaceChildren(
      h("h2", { id: "log-title" }, "Log"),
      h(
        "ol.list.log",
        { "data-testid": "log" },
        [...t.log]
          .reverse()
          .map((entry) =>
            h(
              "li",
              {},
              h("span", {}, entry.by ? `${entry.by} ${entry.text}` : entry.text),
              h("time.muted", { datetime: new Date(entry.at).toISOString() }, when(entry.at)),
            ),
          ),
      ),
    );
  }

  /** The heat's countdown to its start, once a second. */
  tick() {
    const node = this.heatNow.querySelector("[data-testid=heat-starts]");
    if (!(node instanceof HTMLElement)) return;
    const left = Number(node.dataset.at) - this.conn.now();
    node.textContent = left > 0 ? `Starts in ${formatTime(left)}` : "Starting…";
  }
}
