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
import { formatDate, formatDateTime, formatNumber, t as tr } from "../i18n.js";
import { ServerError } from "../net.js";
import { describeVariant, parseVariant } from "../rules.js";
import { liveRanking, ReachedTimes, takeProgress } from "../ranking.js";
import {
  isEntrant,
  heatToJoin,
  liveHeat,
  pointsText,
  rankText,
  replayHash,
  resultText,
  sharedRanks,
} from "../tournament-data.js";
import { errorText, formatTime, getJSON, h, statusWord } from "../ui.js";
import { foundationCount } from "../view.js";
import { shownName } from "./bots.js";
import { inviteField, verifyDeal } from "./room-parts.js";
import { stateWord, variantsText } from "./tournaments.js";

/** @import { Board } from "../game.js" */
/** @import { App } from "../main.js" */
/** @import { LiveRacer } from "../ranking.js" */
/** @import { BoardStatus, RoomFrame, ServerFrame, Tournament, TournamentActionName, TournamentRound } from "../wire.js" */

/** How many racers the leaders panel shows. */
const LEADERS_SHOWN = 5;

/** A round's states, each worded as `tournament.round.state.<state>`. */
const ROUND_STATES = new Set(["scheduled", "lobby", "racing", "finished", "cancelled", "open", "closed"]);

/** The log entries' kinds this client words (`server.log.<kind>`; docs/protocol.md). */
const LOG_KINDS = new Set([
  "created",
  "registration_opened",
  "registration_closed",
  "removed",
  "cancelled",
  "heat_started_early",
  "heat_started",
  "heat_finished",
  "tournament_over",
  "series_over",
]);

/**
 * Put `children` in `node` in place of what it held (null: nothing).
 * @param {HTMLElement} node
 * @param {...(Node | string | null)} children
 */
function fill(node, ...children) {
  node.replaceChildren(...children.flatMap((child) => (child === null ? [] : [child])));
}

/** @param {number} ms */
const when = (ms) => formatDateTime(ms);

/**
 * A day (`YYYY-MM-DD`, a series' UTC day) in the reader's words.
 * @param {string} day
 */
const dayText = (day) => (day ? formatDate(Date.parse(day), { dateStyle: "medium", timeZone: "UTC" }) : "");

/**
 * The tournament's format and settings in a line.
 * @param {Tournament} t
 */
function settingsText(t) {
  const variants = variantsText(t.variants);
  if (t.format === "series" && t.series)
    return tr("tournament.page.settingsSeries", {
      from: dayText(t.series.from),
      to: dayText(t.series.to),
      variants,
    });
  const heats = t.heats;
  if (!heats) return variants;
  return tr("tournament.page.settingsHeats", {
    n: heats.count,
    variants,
    start: when(heats.start_at),
    pause: heats.pause,
    limit: formatTime(heats.time_limit * 1000),
  });
}

/**
 * A round's name: "Heat 2", or a series day's date and variant.
 * @param {Tournament} t
 * @param {TournamentRound} round
 */
function roundLabel(t, round) {
  if (t.format === "heats") return tr("tournament.round.heat", { n: round.round });
  if (round.date && round.variant)
    return tr("tournament.round.day", {
      date: dayText(round.date),
      variant: describeVariant(parseVariant(round.variant)),
    });
  return round.label;
}

/**
 * A log entry in words: its kind worded in the reader's language, else the server's
 * English text (an entry from before kinds, or a kind this client does not know).
 * @param {{by: string, text: string, kind?: string, args?: Record<string, string | number>}} entry
 */
function logText(entry) {
  if (entry.kind && LOG_KINDS.has(entry.kind)) {
    const args = { ...entry.args };
    if (typeof args.name === "string") args.name = shownName({ name: args.name });
    return tr(`server.log.${entry.kind}`, { ...args, by: shownName({ name: entry.by }) });
  }
  return entry.by ? `${shownName({ name: entry.by })} ${entry.text}` : entry.text;
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
    this.title = h(
      "h1",
      { id: "t-title", style: "margin:0;font-size:1.4rem" },
      tr("tournament.page.loading"),
    );
    /** Whether the server said there is no such tournament. */
    this.missing = false;
    /** @type {unknown} the refusal the message line shows, if any */
    this.said = null;
    this.message = h("p.message", { role: "status", "data-testid": "t-message" });
    this.header = h("section.panel", { "aria-labelledby": "t-title", "data-testid": "t-header" }, this.title);
    this.heatNow = h("section.panel.heat-now", {
      hidden: true,
      "data-testid": "heat-now",
      "aria-label": tr("tournament.heat.region"),
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
        this.missing = true;
        this.renderMissing();
      } else this.say(error);
    }
  }

  /** The header of a tournament that does not exist. */
  renderMissing() {
    this.title.textContent = tr("tournament.page.missing");
    fill(
      this.header,
      this.title,
      h(
        "p",
        {},
        tr("tournament.page.missingText"),
        " ",
        h("a", { href: "#/tournaments" }, tr("tournament.list.title")),
      ),
    );
  }

  /**
   * Show a refusal on the message line (null: nothing).
   * @param {unknown} error
   */
  say(error) {
    this.said = error;
    this.message.textContent = error === null ? "" : errorText(error);
  }

  /** The page again in the active language, from the state it holds. */
  relabel() {
    this.heatNow.setAttribute("aria-label", tr("tournament.heat.region"));
    this.say(this.said);
    if (this.t) this.render();
    else if (this.missing) this.renderMissing();
    else this.title.textContent = tr("tournament.page.loading");
  }

  /**
   * Send an entrant's or the organizer's request; its answer (a `tournament`) renders.
   * @param {"tournament_enter" | "tournament_withdraw" | "tournament_action"} t
   * @param {{action?: TournamentActionName, user?: string}} [extra]
   */
  async ask(t, extra = {}) {
    this.say(null);
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
      this.say(error);
    }
  }

  // ------------------------------------------------------------ frames

  /** @param {ServerFrame} frame */
  onFrame(frame) {
    if (frame.t === "tournament") {
      if (frame.tournament.id !== this.id) return;
      const before = this.t;
      this.t = frame.tournament;
      // An entrant here when its heat starts is taken to its seat, the countdown on.
      const seat = heatToJoin(before, this.t, this.conn.user, this.conn.now());
      if (seat) {
        this.app.navigate(`#/room/${seat}`);
        return;
      }
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
        takeProgress(this, frame.boards, this.conn.now());
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
          over ? tr("tournament.page.archived", { state: stateWord(t.state) }) : stateWord(t.state),
        ),
      ),
      h("p.muted", { "data-testid": "t-settings" }, settingsText(t)),
      h(
        "p.muted",
        {},
        tr(t.public ? "tournament.page.organizedPublic" : "tournament.page.organizedUnlisted", {
          name: shownName(t.organizer),
          cap: t.cap,
        }),
      ),
      created ? h("p", { "data-testid": "t-created" }, tr("tournament.page.created")) : null,
      inviteField(link, "t-invite"),
      h("p", {}, h("a", { href: "#/tournaments" }, tr("tournament.page.back"))),
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
        : h("span", {}, tr("tournament.heat.underWay"));
    const action = entrant
      ? h(
          "a.button.big",
          { href: `#/room/${heat.room}`, "data-testid": "join-heat" },
          tr("tournament.heat.join", { n: heat.round }),
        )
      : null;
    const watch = h(
      `a.button${entrant ? ".ghost" : ".big"}`,
      { href: `#/watch/${heat.room}`, "data-testid": "watch-heat" },
      tr("tournament.heat.watch", { n: heat.round }),
    );
    this.heatNow.replaceChildren(
      h(
        "h2",
        {},
        tr(heat.state === "lobby" ? "tournament.heat.open" : "tournament.heat.racing", { n: heat.round }),
      ),
      h("p.muted", {}, startText, ...(entrant ? [" · ", tr("tournament.heat.seatWaiting")] : [])),
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
      this.leaders.replaceChildren(h("p.muted", {}, tr("tournament.heat.ownRace")));
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
            ? tr("tournament.heat.inRoom", { here, n: seated.length })
            : tr("tournament.heat.waitingRoom"),
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
          h("td", {}, shownName(r)),
          h("td", {}, `${formatNumber(r.found)}/52`),
          h("td", {}, formatNumber(r.moves)),
          h("td", {}, statusWord(r.status)),
        ),
      );
    const done = racers.filter((r) => r.status !== "playing").length;
    this.leaders.replaceChildren(
      h("h3", { id: "leaders-title" }, tr("tournament.heat.leaders")),
      table(
        [
          tr("tournament.table.rank"),
          tr("tournament.table.racer"),
          tr("tournament.table.found"),
          tr("tournament.table.moves"),
          tr("tournament.table.status"),
        ],
        rows,
        { "aria-labelledby": "leaders-title" },
      ),
      h(
        "p.muted",
        {},
        tr("tournament.heat.count", { racing: racers.length, done }),
        " · ",
        h(
          "a",
          { href: `#/watch/${heat.room}`, "data-testid": "follow-leader" },
          tr("tournament.heat.follow"),
        ),
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
      ? tr("tournament.registration.open", { time: when(t.closes_at) })
      : t.opens_at > Date.now() && !over
        ? tr("tournament.registration.opens", { time: when(t.opens_at) })
        : tr("tournament.registration.closed");
    const button = open
      ? entered
        ? h(
            "button.ghost",
            { type: "button", "data-testid": "withdraw", onclick: () => this.ask("tournament_withdraw") },
            tr("tournament.registration.withdraw"),
          )
        : h(
            "button",
            {
              type: "button",
              "data-testid": "enter",
              disabled: t.entrants.length >= t.cap,
              onclick: () => this.ask("tournament_enter"),
            },
            tr(t.entrants.length >= t.cap ? "tournament.registration.full" : "tournament.registration.enter"),
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
              h(
                "span",
                {},
                e.user === me ? tr("tournament.registration.you", { name: shownName(e) }) : shownName(e),
              ),
              organizer && !over
                ? h(
                    "button.ghost",
                    {
                      type: "button",
                      "data-testid": `remove-${e.name}`,
                      "aria-label": tr("tournament.registration.removeLabel", { name: shownName(e) }),
                      onclick: () => {
                        if (
                          window.confirm(tr("tournament.registration.removeConfirm", { name: shownName(e) }))
                        )
                          this.ask("tournament_action", { action: "remove", user: e.user });
                      },
                    },
                    tr("tournament.registration.remove"),
                  )
                : null,
            ),
          )
        : [h("li.empty", {}, tr("tournament.registration.none"))],
    );
    this.registration.hidden = false;
    fill(
      this.registration,
      h("h2", { id: "reg-title" }, tr("tournament.registration.title", { n: t.entrants.length, cap: t.cap })),
      h(
        "p",
        { "data-testid": "registration" },
        status,
        ...(entered ? [" ", tr("tournament.registration.entered")] : []),
      ),
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
      h("h2", { id: "tools-title" }, tr("tournament.tools.title")),
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
              tr("tournament.tools.close"),
            )
          : windowOpen && t.state === "upcoming"
            ? h(
                "button.ghost",
                {
                  type: "button",
                  "data-testid": "open-registration",
                  onclick: () => this.ask("tournament_action", { action: "open" }),
                },
                tr("tournament.tools.open"),
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
              tr("tournament.tools.startHeat", { n: waiting.round }),
            )
          : null,
        h(
          "button.ghost.danger",
          {
            type: "button",
            "data-testid": "cancel-tournament",
            onclick: () => {
              if (window.confirm(tr("tournament.tools.cancelConfirm", { name: t.name })))
                this.ask("tournament_action", { action: "cancel" });
            },
          },
          tr("tournament.tools.cancel"),
        ),
      ),
      h("p.muted", {}, tr("tournament.tools.logged")),
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
        h("td", {}, shownName(s)),
        h("td", {}, pointsText(s.points)),
        h("td", {}, formatNumber(s.wins)),
        h("td", {}, formatNumber(s.rounds)),
      ),
    );
    fill(
      this.standings,
      h(
        "h2",
        { id: "standings-title" },
        tr(over ? "tournament.standings.final" : "tournament.standings.title"),
      ),
      rows.length
        ? table(
            [
              tr("tournament.table.rankWord"),
              tr("tournament.table.entrant"),
              tr("tournament.table.points"),
              tr("tournament.table.wins"),
              tr("tournament.table.rounds"),
            ],
            rows,
            { "data-testid": "standings" },
          )
        : h("p.empty", {}, tr("tournament.registration.none")),
      shared.size ? h("p.muted", {}, tr("tournament.standings.shared")) : null,
    );
  }

  /**
   * @param {Tournament} t
   * @param {boolean} over
   */
  renderRounds(t, over) {
    this.rounds.hidden = false;
    this.rounds.replaceChildren(
      h("h2", { id: "rounds-title" }, tr(over ? "tournament.rounds.archive" : "tournament.rounds.title")),
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
        h("td", {}, shownName(r)),
        h("td", {}, pointsText(r.points)),
        h("td", {}, resultText(r)),
        h("td", {}, formatNumber(r.moves)),
        h(
          "td",
          {},
          replayHash(r) && round.state !== "racing"
            ? h(
                "a",
                {
                  href: replayHash(r) ?? "#",
                  "aria-label": tr("tournament.rounds.replayOf", { name: shownName(r) }),
                },
                tr("tournament.rounds.replay"),
              )
            : "",
        ),
      ),
    );
    const words = ROUND_STATES.has(round.state) ? tr(`tournament.round.state.${round.state}`) : round.state;
    const key = `verify-${round.round}`;
    const verify = round.seed
      ? verifyDeal(round.seed, round.commitment, t.format === "heats" ? "race" : "daily")
      : round.commitment
        ? h(
            "details.verify",
            {},
            h("summary", {}, tr("tournament.rounds.commitment")),
            h("p.muted", {}, tr("tournament.rounds.commitmentHelp")),
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
      h("h3", { id: `round-title-${round.round}` }, roundLabel(t, round)),
      h(
        "p.muted",
        {},
        [
          words,
          round.start_at
            ? tr(
                round.state === "scheduled" || round.state === "lobby"
                  ? "tournament.rounds.starts"
                  : "tournament.rounds.started",
                { time: when(round.start_at) },
              )
            : null,
          round.certified ? tr("tournament.rounds.certified") : null,
        ]
          .filter((part) => part !== null)
          .join(" · "),
      ),
      rows.length
        ? table(
            [
              tr("tournament.table.place"),
              tr("tournament.table.entrant"),
              tr("tournament.table.points"),
              tr("tournament.table.result"),
              tr("tournament.table.moves"),
              tr("tournament.table.replay"),
            ],
            rows,
            { "data-testid": `results-${round.round}` },
          )
        : round.state === "finished" || round.state === "closed"
          ? h("p.empty", {}, tr("tournament.rounds.nobody"))
          : null,
      verify,
    );
  }

  /** @param {Tournament} t */
  renderLog(t) {
    this.log.hidden = !t.log.length;
    this.log.replaceChildren(
      h("h2", { id: "log-title" }, tr("tournament.log.title")),
      h(
        "ol.list.log",
        { "data-testid": "log" },
        [...t.log]
          .reverse()
          .map((entry) =>
            h(
              "li",
              {},
              h("span", {}, logText(entry)),
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
    node.textContent =
      left > 0 ? tr("tournament.heat.startsIn", { time: formatTime(left) }) : tr("tournament.heat.starting");
  }
}
