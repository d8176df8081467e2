// @ts-check
/**
 * A room: the race lobby, the countdown, your own board (solo or race), opponents as
 * progress, all boards for spectators, and the results with the reveal.
 *
 * It joins as a racer when it can (which also resumes a seat after a reload) and as a
 * spectator otherwise, and rejoins with its offsets after every reconnection. The
 * player's own game (board, moves in flight, hints, keys) is an OwnGame.
 *
 * Every text is the catalog's (`room.*`); `relabel` draws the page again from its state
 * in another language, staying in the room.
 */

import { BoardView } from "../board.js";
import { applyFrame, newBoard, sinceOf } from "../game.js";
import { formatDate, formatNumber, has, t } from "../i18n.js";
import { ServerError } from "../net.js";
import { movesAt, prepareBoard } from "../replay.js";
import { describeVariant, parseVariant } from "../rules.js";
import { announce, errorText, formatTime, getJSON, h, rerender, stat, statusWord } from "../ui.js";
import { leaderSeat, liveRanking, ReachedTimes, takeProgress } from "../ranking.js";
import { faceDownCount, foundationCount, hidesSeenCards } from "../view.js";
import { addBotPanel, labelled } from "./bots.js";
import { nameField } from "./names.js";
import { OwnGame } from "./own-game.js";
import { HeadToHeadPanel } from "./head-to-head.js";
import { matchLine, matchResults } from "../match.js";
import { ReactionsPanel } from "./reactions.js";
import { followButton } from "../follow.js";
import { lobbyPanels, resultsPanel, rivalRow, watchedHeader } from "./room-parts.js";

/** @import { Board } from "../game.js" */
/** @import { App } from "../main.js" */
/** @import { PreparedBoard } from "../replay.js" */
/** @import { BoardFrame, DiffFrame, ErrorFrame, HintFrame, JoinFrame, MatchRecord, RankingRow, ReplayData, ResultsFrame,
 *   RoomFrame, ServerFrame, BoardStatus } from "../wire.js" */
/** @import { Progress } from "./room-parts.js" */

/**
 * A finished game's board to race against: room, race number and seat.
 * @typedef {{room: string, gen: number, seat: number}} GhostSource
 */

/**
 * A board watched on this page, with its article and header.
 * @typedef {{wrap: HTMLElement, header: HTMLElement, board: BoardView}} Watched
 */

/** A heat of many racers shows this many boards (the leaders'), and a list of everyone. */
const MAX_BOARDS = 6;

/** A racer of a big heat sees this many rivals (the leaders). */
const MAX_RIVALS = 5;

/** Error codes that refuse a `join` as one role and lead to joining as the other. */
const JOIN_REFUSALS = new Set(["room_full", "wrong_state", "own_race"]);

/** The stats over a racer's board: test id and caption's key (`room.stats.*`). */
const STATS = /** @type {const} */ (["time", "moves", "score", "found", "pass"]);

/**
 * Words for a server's refusal: the catalog's for its code, else the server's own.
 * @param {string} code
 * @param {string} message
 */
function refusalText(code, message) {
  return has(`errors.${code}`) ? t(`errors.${code}`) : message;
}

/**
 * A daily challenge's day (`2026-12-03`) as the active language writes a date.
 * @param {string} day
 */
function dayText(day) {
  const at = /^\d{4}-\d{2}-\d{2}$/.test(day) ? Date.parse(`${day}T00:00:00Z`) : NaN;
  return Number.isNaN(at) ? day : formatDate(at, { dateStyle: "medium", timeZone: "UTC" });
}

export class RoomPage {
  /**
   * @param {App} app
   * @param {string} roomId
   * @param {{watchOnly: boolean, ghost?: GhostSource | null}} options
   */
  constructor(app, roomId, { watchOnly, ghost = null }) {
    this.app = app;
    this.roomId = roomId;
    this.watchOnly = watchOnly;
    this.ghostSource = ghost;
    /** @type {PreparedBoard | null} */
    this.ghost = null;
    /** @type {"racer" | "spectator"} */
    this.role = watchOnly ? "spectator" : "racer";
    /** @type {RoomFrame | null} */
    this.room = null;
    /** @type {number | null} */
    this.gen = null;
    /** @type {number | null} your seat, once a `room` frame has said */
    this.seat = null;
    /** The room's variant, from its `room` frame (until then, the default one). */
    this.variant = parseVariant("");
    this.spectators = 0;
    /** @type {OwnGame | null} */
    this.own = null;
    /** @type {Map<number, Board>} */
    this.boards = new Map();
    /** @type {Map<number, Watched>} */
    this.views = new Map();
    /** @type {Map<number, Progress>} */
    this.progress = new Map();
    /** @type {ResultsFrame | null} */
    this.results = null;
    /** @type {(() => void)[]} */
    this.unbinders = [];
    /** @type {number | null} */
    this.finishedAt = null;
    this.pendingResend = false;
    /** A racer whose own board is done watches the rest of its race as a spectator. */
    this.watchingRest = false;
    /** @type {Map<number, number>} when (server ms) this page saw each board end */
    this.doneAt = new Map();
    /** When this page saw each board reach its count of cards home. */
    this.reached = new ReachedTimes();
    this.ticks = 0;
    /** @type {number | undefined} */
    this.clock = undefined;
    this.conn = app.connection();
    const stats = STATS.map((key) => stat(t(`room.stats.${key}`), key));
    const [setTime, setMoves, setScore, setFound, setPass] = stats.map(([, set]) => set);
    this.set = { time: setTime, moves: setMoves, score: setScore, found: setFound, pass: setPass };
    /** The stats' captions, to write again in another language. */
    this.captions = stats.map(([node]) => node.querySelector("small"));
    /** The room does not exist (a `no_room` refusal). */
    this.missing = false;
    /**
     * What the message line says, as a function to say it again in another language
     * (null: a text given as is, or nothing).
     * @type {(() => string) | null}
     */
    this.saying = null;
    this.title = h("h1", { style: "margin:0;font-size:1.2rem" }, t("room.joining"));
    this.timeLeft = h("span.time-left", { "data-testid": "time-left", hidden: true });
    this.subtitle = h("span.muted", {});
    this.tools = h("div.row");
    this.message = h("p.message", { role: "status", "data-testid": "message" });
    this.lobby = h("section.lobby", { hidden: true });
    /** A racer's "Playing as" in the lobby: kept across the lobby's renders (and its focus). */
    /** @type {{node: HTMLElement, unbind: () => void} | null} */
    this.nameField = null;
    this.countdown = h("div.countdown", { hidden: true, "aria-live": "assertive" });
    this.ownWrap = h("div", { hidden: true });
    this.opponents = h("aside.opponents", { "aria-label": t("room.opponents.label") });
    this.raceLayout = h("div.layout-race", { hidden: true }, this.ownWrap, this.opponents);
    this.watchGrid = h("div.boards", { hidden: true, "data-testid": "boards" });
    /** Why a spectator sees backs where a racer sees cards (once, above the boards). */
    this.maskNote = h("p.muted.mask-note", { hidden: true, "data-testid": "mask-note" });
    /** Every racer of a race with more than MAX_BOARDS, best first (its boards show the leaders). */
    this.field = h("details.field", { hidden: true, "data-testid": "all-racers" });
    this.resultsBox = h("section.panel", { hidden: true, "data-testid": "results" });
    /** A match's score line, shown throughout the match (empty in a room that is none). */
    this.matchBox = h("div", {});
    /** A match's results at its end (its record, read once the match is over). */
    this.matchResultsBox = h("div", {});
    /** Which match's record is shown or being read ("ROOM/FROM/DEALS"). */
    this.matchKey = "";
    /** Your record against each racer, under a race's results. */
    this.headToHead = new HeadToHeadPanel(() => this.conn.now());
    this.stats = h("div.stats", { hidden: true }, ...stats.map(([node]) => node));
    this.reactions = new ReactionsPanel({
      send: (id) => this.conn.send({ t: "react", room: this.roomId, r: id }),
      toggle: () => this.toggleReactions(),
    });
    /** @type {boolean | null} whether the server was last told to send reactions here */
    this.reactionsTold = null;
  }

  // ------------------------------------------------------------ lifecycle

  /** @param {HTMLElement} root */
  mount(root) {
    root.append(
      h(
        "section.game",
        {},
        h(
          "div.statusbar",
          {},
          h("div", {}, this.title, this.subtitle, this.timeLeft),
          this.stats,
          this.tools,
        ),
        this.matchBox,
        this.message,
        this.reactions.bar,
        this.lobby,
        this.matchResultsBox,
        this.resultsBox,
        this.raceLayout,
        this.maskNote,
        this.watchGrid,
        this.field,
        this.countdown,
        this.reactions.layer,
      ),
    );
    const conn = this.conn;
    this.unbinders.push(conn.on("frame", (frame) => this.onFrame(frame)));
    const joined = this.app.takeJoined(this.roomId); // its `create` joined it (solo)
    this.unbinders.push(
      // The join goes right after `hello`, in the same round trip (protocol section 2).
      conn.on("hello", () => {
        // Moves in flight when the connection dropped may not have arrived: send them
        // again once rejoined (their ids make a repeat harmless).
        this.pendingResend = true;
        this.join();
      }),
    );
    this.unbinders.push(
      this.app.onSettings(() => {
        this.own?.settingsChanged();
        this.render();
      }),
    );
    if (conn.greeted && !joined) this.join();
    this.clock = window.setInterval(() => this.tick(), 100);
    if (this.ghostSource) this.loadGhost();
  }

  /**
   * The page again in the active language, from what it holds: the room, its boards,
   * the name being typed and the focus stay (no rejoin).
   */
  relabel() {
    STATS.forEach((key, i) => {
      const caption = this.captions[i];
      if (caption) caption.textContent = t(`room.stats.${key}`);
    });
    this.opponents.setAttribute("aria-label", t("room.opponents.label"));
    this.reactions.relabel();
    const field = this.nameField;
    const panel = field?.node.parentElement;
    if (field && panel)
      rerender(panel, () => {
        field.unbind();
        this.nameField = nameField(this.app, "lobby-name");
        return this.nameField.node;
      });
    const focused = document.activeElement;
    const testid =
      focused instanceof HTMLElement && focused.closest(".game") ? focused.dataset.testid : undefined;
    if (this.saying) this.say(this.saying);
    if (this.missing) this.showMissing();
    else if (!this.room) this.title.textContent = t("room.joining");
    this.matchKey = ""; // a match's results are read and drawn again, in this language
    this.render();
    // The buttons and panels drawn again: the focus back on the same control.
    if (testid && !focused?.isConnected) {
      const again = this.title.closest(".game")?.querySelector(`[data-testid="${CSS.escape(testid)}"]`);
      if (again instanceof HTMLElement) again.focus();
    }
  }

  /** The finished game to race against, replayed on this game's clock. */
  async loadGhost() {
    if (!this.ghostSource) return;
    const { room, gen, seat } = this.ghostSource;
    try {
      const data = /** @type {ReplayData | null} */ (
        await getJSON(`/api/replay/${encodeURIComponent(room)}/${gen}`)
      );
      const board = data?.boards.find((b) => b.seat === seat);
      if (!board) throw new Error("that game has no such board");
      this.ghost = prepareBoard(board);
      this.render();
    } catch (error) {
      this.say(() => t("room.ghost.none", { reason: errorText(error) }));
    }
  }

  unmount() {
    window.clearInterval(this.clock);
    this.headToHead.stop();
    for (const unbind of this.unbinders.splice(0)) unbind();
    this.own?.destroy();
    this.nameField?.unbind();
    for (const { board } of this.views.values()) board.destroy();
    if (this.conn?.online && this.room) this.conn.send({ t: "leave", room: this.roomId });
  }

  /** Join (or rejoin after a reconnection) with the offsets of every board applied. */
  async join() {
    const boards =
      this.role === "racer" ? (this.own ? [this.own.play.board] : []) : [...this.boards.values()];
    /** @type {JoinFrame} */
    const request = { t: "join", room: this.roomId, as: this.role, reactions: this.reactionsWanted() };
    this.reactionsTold = request.reactions ?? null;
    const since = this.gen === null ? [] : sinceOf(boards);
    if (since.length) request.since = since;
    try {
      await this.conn.request(request);
    } catch (error) {
      if (!(error instanceof ServerError)) return; // disconnected: the next `hello` rejoins
      this.joinRefused(error);
    }
  }

  /** @param {ServerError} error */
  joinRefused(error) {
    if (this.role === "racer" && (error.code === "room_full" || error.code === "wrong_state")) {
      this.role = "spectator";
      this.join();
    } else if (this.role === "spectator" && error.code === "own_race") {
      this.role = "racer";
      this.join();
    } else if (error.code === "no_room") {
      this.missing = true;
      this.showMissing();
    } else {
      this.say(() => errorText(error));
    }
  }

  /** The words for a room that does not exist (or no longer). */
  showMissing() {
    this.title.textContent = t("room.missing.title");
    this.saying = null;
    this.message.replaceChildren(t("room.missing.text"), " ", h("a", { href: "#/" }, t("room.missing.home")));
  }

  /**
   * Say `text` on the message line: a function of the catalog's words is said again
   * in another language (`relabel`).
   * @param {string | (() => string)} text
   */
  say(text) {
    delete this.message.dataset.verdict;
    this.saying = typeof text === "function" ? text : null;
    this.message.textContent = typeof text === "function" ? text() : text;
  }

  // ------------------------------------------------------------ frames

  /** @param {ServerFrame} frame */
  onFrame(frame) {
    if (!("room" in frame) || frame.room !== this.roomId) {
      if (frame.t === "error" && frame.room === undefined && frame.rid === undefined)
        this.say(() => refusalText(frame.code, frame.msg));
      return;
    }
    switch (frame.t) {
      case "room":
        this.onRoom(frame);
        break;
      case "board":
      case "diff":
        if (frame.audience === "own") this.onOwn(frame);
        else this.onWatched(frame);
        break;
      case "ack":
        this.own?.acknowledge(frame.id);
        break;
      case "progress":
        takeProgress(this, frame.boards, this.conn.now());
        if (frame.spectators !== undefined) this.spectators = frame.spectators;
        this.renderProgress();
        break;
      case "results":
        this.results = frame;
        this.render();
        break;
      case "hint":
        this.onHint(frame);
        break;
      case "reactions":
        this.reactions.show(frame.counts);
        break;
      case "error":
        this.onError(frame);
        break;
      default:
        break;
    }
  }

  /** @param {RoomFrame} frame */
  onRoom(frame) {
    const rejoined = this.room === null || this.pendingResend;
    if (this.gen !== null && frame.gen !== this.gen) this.resetRace();
    this.gen = frame.gen;
    this.room = frame;
    this.variant = parseVariant(frame.variant);
    this.spectators = frame.spectators;
    const mine = frame.seats.find((s) => s && s.user === this.conn.user);
    this.seat = mine ? mine.seat : null;
    if (this.role === "racer" && this.seat !== null && !this.own) this.own = new OwnGame(this, this.seat);
    if (this.role === "racer" && this.seat === null && frame.state !== "lobby") {
      this.role = "spectator";
      this.join();
    }
    if (rejoined) {
      this.pendingResend = false;
      this.own?.resend();
    }
    this.render();
  }

  resetRace() {
    this.own?.destroy();
    this.own = this.seat === null ? null : new OwnGame(this, this.seat);
    this.boards.clear();
    this.progress.clear();
    this.doneAt.clear();
    this.reached.clear();
    this.results = null;
    this.finishedAt = null;
    this.say(""); // the last game's words do not belong to the next one
  }

  /** @param {BoardFrame | DiffFrame} frame */
  onOwn(frame) {
    if (!this.own) this.own = new OwnGame(this, frame.seat);
    if (!this.own.receive(frame)) this.join();
  }

  /** @param {BoardFrame | DiffFrame} frame */
  onWatched(frame) {
    const board = this.boards.get(frame.seat) ?? newBoard(frame.seat, frame.audience);
    const { board: next, gap } = applyFrame(board, frame);
    if (gap) {
      this.join();
      return;
    }
    // A board seen ending live: its clock stops now (a frame only a tick late).
    if (frame.t === "diff" && board.status === "playing" && next.status !== "playing")
      this.doneAt.set(frame.seat, this.conn.now());
    this.boards.set(frame.seat, next);
    this.reached.note(frame.seat, this.foundOf(frame.seat), this.conn.now());
    this.renderWatched();
  }

  /** @param {ErrorFrame} frame */
  onError(frame) {
    // A refused join is answered by `joinRefused` (a seat taken or a race started
    // means watching instead: nothing to tell the reader).
    if (frame.rid !== undefined && JOIN_REFUSALS.has(frame.code)) return;
    const id = frame.id;
    if (id !== undefined && this.own?.refused({ ...frame, id })) return;
    this.say(() => refusalText(frame.code, frame.msg));
  }

  /** @param {HintFrame} frame */
  onHint(frame) {
    const text = this.own?.showHint(frame) ?? frame.msg;
    this.say(text);
    this.message.dataset.verdict = frame.verdict;
    announce(text);
  }

  // ------------------------------------------------------------ play

  /** Practice rules (undo, hints): solo games and unranked daily replays. */
  practice() {
    const room = this.room;
    return (
      room !== null && (room.kind === "solo" || (room.kind === "daily" && room.daily && !room.daily.ranked))
    );
  }

  /** @param {KeyboardEvent} event */
  onKey(event) {
    if (this.role === "racer" && this.own?.key(event)) event.preventDefault();
  }

  // ------------------------------------------------------------ reactions

  /** A racer whose own game is under way (not one whose board is done, or in a lobby). */
  playing() {
    const room = this.room;
    if (this.role !== "racer" || !room || (room.state !== "countdown" && room.state !== "racing"))
      return false;
    return (this.own?.play.board.status ?? "playing") === "playing";
  }

  /** Whether this page shows reactions: the player's setting for playing, or watching. */
  reactionsWanted() {
    const settings = this.app.settings;
    return this.playing() ? settings.reactionsPlaying : settings.reactionsWatching;
  }

  /** The room tools' toggle: the setting of the moment (playing or watching) flips. */
  toggleReactions() {
    const key = this.playing() ? "reactionsPlaying" : "reactionsWatching";
    this.app.settings = { ...this.app.settings, [key]: !this.app.settings[key] };
    this.app.applySettings(); // saved, and every listener (this page's render) told
  }

  /**
   * Reactions have a place where others watch with you: spectators, and the racers of a
   * race (a solo or daily player alone has neither the bar nor the toggle; its settings
   * still apply).
   */
  reactionsOffered() {
    return this.role === "spectator" || this.room?.kind === "race";
  }

  /** The bar for those who may react, and the server told when the setting changed. */
  renderReactions() {
    const on = this.reactionsWanted();
    this.reactions.update({ canSend: this.reactionsOffered() && !this.playing(), on });
    if (this.room && this.reactionsTold !== null && this.reactionsTold !== on && this.conn.online) {
      this.conn.send({ t: "show_reactions", room: this.roomId, on });
      this.reactionsTold = on;
    }
  }

  // ------------------------------------------------------------ rendering

  /**
   * A racer whose own board is done while the race goes on watches the other boards
   * (the server then allows it, with the spectator's view); once the race is over it
   * takes its seat again (for the rematch).
   */
  followRole() {
    const room = this.room;
    if (!room || this.seat === null) return;
    const mineDone = this.own !== null && this.own.play.board.status !== "playing";
    if (
      this.role === "racer" &&
      room.kind === "race" &&
      room.state === "racing" &&
      mineDone &&
      !this.results
    ) {
      this.role = "spectator";
      this.watchingRest = true;
      this.join();
    } else if (this.watchingRest && room.state !== "racing" && room.state !== "countdown") {
      this.role = "racer";
      this.watchingRest = false;
      this.join();
    }
  }

  render() {
    const room = this.room;
    if (!room) return;
    this.followRole();
    const kind = room.daily
      ? t(room.daily.ranked ? "room.kind.daily" : "room.kind.dailyUnranked", {
          date: dayText(room.daily.date),
        })
      : room.tournament
        ? t("room.kind.heat", { heat: room.tournament.heat })
        : room.kind === "solo"
          ? t("room.kind.solo")
          : t("room.kind.race");
    // The title and the subtitle are short facts in a row, each a message of its own.
    this.title.textContent = [
      kind,
      describeVariant(this.variant),
      this.ghost ? t("room.ghost.versus", { name: this.ghost.name }) : null,
    ]
      .filter(Boolean)
      .join(" · ");
    const state =
      room.state === "racing" && room.kind !== "race"
        ? "playing"
        : ["lobby", "countdown", "racing", "finished"].includes(room.state)
          ? room.state
          : null;
    this.subtitle.textContent = [
      this.watchingRest
        ? t("room.state.overWatching")
        : this.role === "spectator"
          ? t("room.state.watching")
          : null,
      state ? t(`room.state.${state}`) : room.state,
      room.certified && room.state !== "lobby" ? t("room.state.certified") : null,
      this.spectators ? t("room.state.spectators", { n: this.spectators }) : null,
    ]
      .filter(Boolean)
      .join(" · ");
    this.subtitle.dataset.testid = "subtitle";
    const racer = this.role === "racer" && this.seat !== null;
    this.lobby.hidden = room.state !== "lobby";
    if (room.state === "lobby") this.renderLobby(room);
    const started = room.state === "racing" || room.state === "finished";
    // After a race, a racer's own board joins everyone's final boards (one per player).
    const raceOver = Boolean(this.results) && room.kind === "race";
    this.raceLayout.hidden = !(racer && started) || (racer && raceOver);
    const rivals = room.kind === "race" || Boolean(this.ghost);
    this.opponents.hidden = !rivals;
    this.raceLayout.style.gridTemplateColumns = rivals ? "" : "1fr";
    // Spectators watch every board; racers see them all once a race is over.
    this.watchGrid.hidden = !(started && (!racer || raceOver));
    this.field.hidden = this.watchGrid.hidden || room.seats.filter((x) => x !== null).length <= MAX_BOARDS;
    this.stats.hidden = !(racer && started);
    // The opponents first: on a phone they sit above the board, which fits what is left.
    this.renderProgress();
    if (racer && started) this.own?.render();
    if (started) this.renderWatched();
    else this.maskNote.hidden = true;
    this.renderField();
    this.renderReactions();
    this.renderTools();
    this.renderResults();
    this.renderMatch();
    this.tick();
  }

  /** You race in this room's match, which goes on (leaving the room would forfeit it). */
  inMatch() {
    const match = this.room?.match;
    return Boolean(match && !match.over && this.seat !== null && !this.watchOnly);
  }

  /** A match's score line and, once it is over, its results (read once). */
  renderMatch() {
    const room = this.room;
    if (!room) return;
    const line = matchLine(room, this.conn.now());
    this.matchBox.replaceChildren(...(line ? [line] : []));
    const match = room.match;
    if (!match?.over) {
      this.matchKey = "";
      this.matchResultsBox.replaceChildren();
      return;
    }
    const key = `${this.roomId}/${match.from}/${match.deals.length}`;
    if (key === this.matchKey) return;
    this.matchKey = key;
    getJSON(`/api/matches/${encodeURIComponent(this.roomId)}/${match.from}`)
      .then((record) => {
        if (this.matchKey !== key) return;
        this.matchResultsBox.replaceChildren(
          ...(record ? [matchResults(/** @type {MatchRecord} */ (record))] : []),
        );
      })
      .catch(() => {
        if (this.matchKey === key) this.matchKey = ""; // read again at the next render
      });
  }

  /** @param {RoomFrame} room */
  renderLobby(room) {
    if (room.tournament) {
      this.renderHeatLobby(room, room.tournament);
      return;
    }
    const link = `${window.location.origin}${window.location.pathname}#/room/${this.roomId}`;
    const panels = lobbyPanels(room, this.conn.user, link, {
      onReady: (ready) => this.conn.send({ t: "ready", room: this.roomId, ready }),
      onStart: () => this.conn.send({ t: "start", room: this.roomId }),
      onRemoveBot: (seat) => this.conn.send({ t: "remove_bot", room: this.roomId, seat }),
    });
    const bots = addBotPanel(room, this.conn.user, (level) =>
      this.conn.send({ t: "add_bot", room: this.roomId, level }),
    );
    if (bots) panels.push(bots);
    if (this.role === "racer" && this.seat !== null && !this.nameField) {
      this.nameField = nameField(this.app, "lobby-name");
      this.lobby.append(h("div.panel", {}, this.nameField.node));
    }
    // The name's panel stays, never rebuilt: what is being typed in it, and its focus, too.
    const keep = this.nameField?.node.parentElement ?? null;
    for (const child of [...this.lobby.children]) if (child !== keep) child.remove();
    this.lobby.prepend(...panels);
  }

  /**
   * A tournament heat's lobby: every entrant has a seat (ready: the heat starts at its
   * time, or when the organizer starts it), so no invite and no ready button.
   * @param {RoomFrame} room
   * @param {{id: string, heat: number}} heat
   */
  renderHeatLobby(room, heat) {
    const seated = room.seats.filter((s) => s !== null);
    const here = seated.filter((s) => s.online);
    const mine = this.seat !== null && this.role === "racer";
    this.lobby.replaceChildren(
      h(
        "div.panel",
        { "data-testid": "heat-lobby" },
        h("h2", {}, t("room.heat.title", { heat: heat.heat })),
        h("p", {}, mine ? t("room.heat.seated") : t("room.heat.start")),
        h(
          "p.muted",
          { "data-testid": "heat-here" },
          t("room.heat.here", { here: here.length, racers: seated.length }),
        ),
        h(
          "ul.list.seats.compact",
          {},
          here.slice(0, 30).map((s) => h("li", {}, h("strong", {}, labelled(s)))),
        ),
        here.length > 30 ? h("p.muted", {}, t("room.heat.more", { n: here.length - 30 })) : null,
        h(
          "p",
          {},
          h("a", { href: `#/t/${heat.id}`, "data-testid": "heat-tournament" }, t("room.heat.tournament")),
        ),
      ),
    );
  }

  renderTools() {
    const room = this.room;
    if (!room) return;
    const buttons = [];
    if (this.role === "racer" && this.practice() && room.state === "racing") {
      buttons.push(
        h(
          "button.ghost",
          {
            type: "button",
            onclick: () => this.own?.undo(),
            "data-testid": "undo",
            title: t("room.tools.undoKey"),
          },
          t("room.tools.undo"),
        ),
        h(
          "button.ghost",
          {
            type: "button",
            onclick: () => this.own?.askHint(),
            "data-testid": "hint",
            title: t("room.tools.hintKey"),
          },
          t("room.tools.hint"),
        ),
      );
    }
    if (this.role === "racer" && this.own?.canFinish()) {
      buttons.push(
        h(
          "button",
          { type: "button", onclick: () => this.own?.finish(), "data-testid": "finish" },
          t("room.tools.finish"),
        ),
      );
    }
    if (this.role === "racer" && room.state === "racing" && this.own?.play.board.status === "playing") {
      buttons.push(
        h(
          "button.ghost",
          { type: "button", onclick: () => this.resign(), "data-testid": "resign" },
          room.kind === "race" ? t("room.tools.resign") : t("room.tools.giveUp"),
        ),
      );
    }
    if (room.kind === "daily")
      buttons.push(
        h(
          "a.button.ghost",
          { href: "#/daily", "data-testid": "daily-back" },
          room.state === "finished" ? t("room.tools.dailyRank") : t("room.tools.daily"),
        ),
      );
    if (room.state === "finished" && room.kind === "solo") {
      buttons.push(
        h(
          "button",
          { type: "button", onclick: () => this.newSolo(), "data-testid": "new-game" },
          t("room.tools.newGame"),
        ),
      );
    }
    if (room.tournament)
      buttons.push(
        h(
          "a.button.ghost",
          { href: `#/t/${room.tournament.id}`, "data-testid": "tournament-back" },
          room.state === "finished" ? t("room.tools.standings") : t("room.tools.tournament"),
        ),
      );
    if (
      room.state === "finished" &&
      room.kind === "race" &&
      !room.tournament &&
      !(room.match && !room.match.over) &&
      this.role === "racer" &&
      this.seat !== null
    ) {
      buttons.push(
        h(
          "button",
          {
            type: "button",
            onclick: () => this.conn.send({ t: "rematch", room: this.roomId }),
            "data-testid": "rematch",
          },
          t("room.tools.rematch"),
        ),
      );
    }
    // Leaving the page leaves the room, and a racer who leaves a match forfeits it: no
    // link away while its match goes on (the match's results link every deal's replay).
    if (room.state === "finished" && !this.inMatch())
      buttons.push(
        h(
          "a.button.ghost",
          { href: `#/replay/${this.roomId}/${room.gen}`, "data-testid": "replay-link" },
          t("common.replay"),
        ),
      );
    if (this.reactionsOffered()) buttons.push(this.reactions.toggleButton());
    this.tools.replaceChildren(...buttons);
  }

  resign() {
    if (window.confirm(this.room?.kind === "race" ? t("room.tools.resignAsk") : t("room.tools.giveUpAsk"))) {
      this.conn.send({ t: "resign", room: this.roomId });
    }
  }

  async newSolo() {
    const room = this.room;
    if (!room) return;
    const conn = await this.app.ready();
    const reply = await conn.request({
      t: "create",
      kind: "solo",
      variant: room.variant,
      time_limit: 0,
      public: room.public,
    });
    this.app.navigate(`#/room/${reply.room}`);
  }

  /**
   * The ghost's progress at this game's elapsed time.
   * @param {PreparedBoard} ghost
   * @returns {Progress}
   */
  ghostProgress(ghost) {
    const start = this.room?.start_at;
    const elapsed = start ? this.elapsed() : 0;
    const n = movesAt(ghost, elapsed);
    const view = ghost.views[n];
    const done = n === ghost.views.length - 1 && elapsed >= (ghost.end_t ?? ghost.times[n]);
    return {
      found: foundationCount(view),
      down: faceDownCount(view),
      moves: n,
      status: done ? ghost.status : "playing",
    };
  }

  renderProgress() {
    if (!this.room || this.role !== "racer" || (this.room.kind !== "race" && !this.ghost)) return;
    /** @type {Progress} */
    const notYet = { found: 0, down: 21, moves: 0, status: "playing" };
    const now = this.conn.now();
    const rivals = this.room.seats.flatMap((s) => {
      if (!s || s.seat === this.seat) return [];
      const p = this.progress.get(s.seat) ?? notYet;
      return [
        { key: `opponent-${s.seat}`, name: labelled(s), p, awayLeft: this.awayLeft(s.seat, p.status, now) },
      ];
    });
    if (this.ghost)
      rivals.push({
        key: "ghost",
        name: t("room.ghost.name", { name: this.ghost.name }),
        p: this.ghostProgress(this.ghost),
        awayLeft: null,
      });
    // A big heat: the leaders only, best first.
    const order = rivals.length > MAX_RIVALS ? this.liveOrder() : null;
    const shown = order
      ? order
          .flatMap((r) => rivals.filter((rival) => rival.key === `opponent-${r.seat}`))
          .slice(0, MAX_RIVALS)
      : rivals;
    const rows = shown.map(rivalRow);
    this.opponents.replaceChildren(
      h(
        "h2.opponents-title",
        {},
        this.room.kind !== "race"
          ? t("room.opponents.ghost")
          : order
            ? t("room.opponents.leaders", { n: rivals.length })
            : t("room.opponents.title"),
      ),
      ...rows,
    );
  }

  /** Spectator boards (live) or, once the race is over, everyone's final boards. */
  renderWatched() {
    this.maskNote.hidden = true;
    if (this.watchGrid.hidden || !this.room) return;
    const final = this.results ? new Map(this.results.ranking.map((row) => [row.seat, row])) : null;
    const all = this.room.seats.flatMap((s) => (s ? [s.seat] : []));
    const leader = this.leader(all, final);
    const seats = this.shownSeats(all, final);
    for (const seat of seats) {
      let entry = this.views.get(seat);
      const occupant = this.room.seats[seat];
      if (!occupant) continue;
      // Named anew at each render: a rename, or another language.
      const label = t("room.watched.board", { name: occupant.name });
      if (!entry) {
        const holder = h("div");
        const header = h("header");
        const wrap = h("article.watched", { "data-testid": `board-${seat}` }, header, holder);
        this.watchGrid.append(wrap);
        entry = { wrap, header, board: new BoardView(holder, { variant: this.variant, label }) };
        this.views.set(seat, entry);
      }
      entry.wrap.setAttribute("aria-label", label);
      entry.board.root.setAttribute("aria-label", label);
      const live = this.boards.get(seat);
      const row = final?.get(seat);
      const view = row ? row.view : live?.ready ? live.view : null;
      if (view) entry.board.update(view, { reveal: Boolean(row) });
      entry.wrap.classList.toggle("leader", seat === leader);
    }
    // The leaders' boards in their order (a big heat's change as the race goes).
    if (seats.length < all.length) {
      const wraps = seats.flatMap((seat) => this.views.get(seat)?.wrap ?? []);
      if (wraps.some((wrap, i) => this.watchGrid.children[i] !== wrap)) this.watchGrid.append(...wraps);
    }
    this.renderHeaders(leader);
    // Cards a racer has seen but spectators may not know yet are drawn as backs: say so.
    const masked =
      !final &&
      seats.some((seat) => {
        const live = this.boards.get(seat);
        return Boolean(live?.ready && hidesSeenCards(live.view));
      });
    this.maskNote.hidden = !masked;
    if (masked) this.maskNote.textContent = t("room.watched.masked");
    const kept = new Set(seats);
    for (const [seat, entry] of this.views) {
      if (!this.room.seats[seat] || !kept.has(seat)) {
        entry.board.destroy();
        entry.wrap.remove();
        this.views.delete(seat);
      }
    }
  }

  /** Whether a racer's opponent is away (its countdown shown in the opponents' panel). */
  opponentAway() {
    if (this.role !== "racer" || this.room?.kind !== "race") return false;
    return this.room.seats.some((s) => s && s.seat !== this.seat && !s.online && s.away_since);
  }

  /**
   * For a racer away from a race under way, the time (ms) before it counts as resigned;
   * null when it is there (or its board is done, or the room has no grace period).
   * @param {number} seat
   * @param {BoardStatus} status
   * @param {number} now the server's clock
   * @returns {number | null}
   */
  awayLeft(seat, status, now) {
    const room = this.room;
    const occupant = room?.seats[seat];
    if (!room || !occupant || occupant.online || !occupant.away_since || !room.grace) return null;
    if (room.state !== "racing" || status !== "playing") return null;
    return Math.max(0, occupant.away_since + room.grace - now);
  }

  /**
   * The headers over the watched boards: status, progress, each racer's clock and, for
   * a racer away from a race under way, the time before it counts as resigned.
   * @param {number | null} leader
   */
  renderHeaders(leader) {
    const room = this.room;
    if (!room || this.watchGrid.hidden) return;
    const final = this.results ? new Map(this.results.ranking.map((row) => [row.seat, row])) : null;
    const now = this.conn.now();
    for (const [seat, entry] of this.views) {
      const occupant = room.seats[seat];
      if (!occupant) continue;
      const live = this.boards.get(seat);
      const row = final?.get(seat);
      const view = row ? row.view : live?.ready ? live.view : null;
      const status = row ? row.status : (live?.status ?? "playing");
      const start = room.start_at;
      /** @type {number | null} */
      let clock = null;
      if (start !== undefined && now >= start && room.kind === "race") {
        const end = row?.end_ms;
        if (end !== null && end !== undefined) clock = end;
        else if (status === "playing") clock = (room.ended_at ?? now) - start;
        else if (this.doneAt.has(seat)) clock = (this.doneAt.get(seat) ?? now) - start;
      }
      const awayLeft = this.awayLeft(seat, status, now);
      const name = seat === this.seat ? t("room.watched.you", { name: occupant.name }) : labelled(occupant);
      entry.header.replaceChildren(
        ...watchedHeader(name, {
          leader: seat === leader,
          status,
          found: view ? foundationCount(view) : 0,
          down: view ? faceDownCount(view) : 21,
          moves: row ? row.moves : (live?.moves ?? 0),
          clock: clock === null ? null : Math.max(0, clock),
          awayLeft,
        }),
      );
    }
  }

  /**
   * The seats whose boards are shown: all of them, or in a race of more than
   * MAX_BOARDS the leaders' (after the race, the best ranked).
   * @param {number[]} seats
   * @param {Map<number, RankingRow> | null} final
   */
  shownSeats(seats, final) {
    if (seats.length <= MAX_BOARDS) return seats;
    if (final)
      return [...final.values()]
        .sort((a, b) => a.rank - b.rank)
        .slice(0, MAX_BOARDS)
        .map((row) => row.seat);
    return this.liveOrder()
      .slice(0, MAX_BOARDS)
      .map((r) => r.seat);
  }

  /**
   * Cards home on board `seat` as this page knows it: its watched view, else its progress.
   * @param {number} seat
   */
  foundOf(seat) {
    const board = this.boards.get(seat);
    return board?.ready ? foundationCount(board.view) : (this.progress.get(seat)?.found ?? 0);
  }

  /** Every seated racer's progress as this page knows it, best first, with its rank. */
  liveOrder() {
    const room = this.room;
    if (!room) return [];
    const now = this.conn.now();
    return liveRanking(
      room.seats.flatMap((s) => {
        if (!s) return [];
        const board = this.boards.get(s.seat);
        const p = this.progress.get(s.seat);
        const found = this.foundOf(s.seat);
        this.reached.note(s.seat, found, now);
        return [
          {
            seat: s.seat,
            name: s.name,
            found,
            moves: board?.moves ?? p?.moves ?? 0,
            status: board?.ready ? board.status : (p?.status ?? "playing"),
            doneAt: this.doneAt.get(s.seat) ?? null,
            foundAt: this.reached.at(s.seat, found),
          },
        ];
      }),
    );
  }

  /** The list of every racer of a big race, under the leaders' boards. */
  renderField() {
    const room = this.room;
    if (!room || this.field.hidden) return;
    const final = this.results?.ranking ?? null;
    const rowText = (
      /** @type {{rank: number, name: string, status: import("../wire.js").BoardStatus, found: number, moves: number}} */ r,
    ) =>
      t("room.field.row", {
        rank: r.rank,
        name: r.name,
        status: statusWord(r.status),
        found: r.found,
        moves: r.moves,
      });
    const rows = final
      ? final.map((row) => rowText({ ...row, name: labelled(row) }))
      : this.liveOrder().map(rowText);
    const open = this.field.open;
    this.field.replaceChildren(
      h("summary", {}, t("room.field.summary", { n: rows.length })),
      h(
        "ol.list.compact",
        {},
        rows.map((text) => h("li", {}, text)),
      ),
    );
    this.field.open = open;
  }

  /**
   * @param {number[]} seats
   * @param {Map<number, RankingRow> | null} final
   */
  leader(seats, final) {
    if (seats.length < 2) return null; // a one-player board leads no one
    if (final) {
      const first = [...final.values()].filter((row) => row.rank === 1);
      return first.length === 1 ? first[0].seat : null; // ties are ties: no one leads them
    }
    const shown = new Set(seats);
    return leaderSeat(this.liveOrder().filter((r) => shown.has(r.seat)));
  }

  renderResults() {
    const results = this.results;
    this.resultsBox.hidden = !results;
    const race = results && this.room?.kind === "race" && !this.inMatch() ? results : null;
    this.headToHead.show(race, this.conn.user, this.room?.ended_at);
    if (!results) return;
    // The deal's proof stays open when the panel is drawn again.
    const open = this.resultsBox.querySelector("details")?.open ?? false;
    this.resultsBox.replaceChildren(
      ...resultsPanel(results, {
        kind: this.room?.kind,
        user: this.conn.user,
        follow: (row) => followButton(this.conn, row),
      }),
    );
    // Head to head right under the table, before the deal's proof.
    this.resultsBox.querySelector("table")?.after(this.headToHead.node);
    const details = this.resultsBox.querySelector("details");
    if (details && open) details.open = true;
  }

  /** Time since the start on the server's clock, frozen once your game is over. */
  elapsed() {
    const room = this.room;
    const start = room?.start_at;
    if (!room || start === undefined) return 0;
    const now = this.conn.now();
    const row = this.results?.ranking.find((r) => r.seat === this.seat);
    let end = now;
    if (row && row.time_ms !== null && row.time_ms !== undefined) end = start + row.time_ms;
    else if (room.ended_at) end = room.ended_at;
    else if (this.finishedAt) end = this.finishedAt;
    else if (room.paused_at) end = room.paused_at; // a clock standing still
    return Math.max(0, end - start);
  }

  /** The leader of the boards on the page (as renderWatched outlines it). */
  currentLeader() {
    const room = this.room;
    if (!room) return null;
    const seats = room.seats.flatMap((s) => (s ? [s.seat] : []));
    const final = this.results ? new Map(this.results.ranking.map((row) => [row.seat, row])) : null;
    return this.leader(seats, final);
  }

  tick() {
    const room = this.room;
    if (!room) return;
    this.ticks += 1;
    if (this.role === "racer" && room.kind === "race" && room.state === "racing" && this.ticks % 3 === 0) {
      const before = this.role;
      this.followRole();
      if (this.role !== before) this.render();
    }
    if (this.ghost && room.state === "racing" && this.ticks % 3 === 0) this.renderProgress();
    // An opponent away: its countdown runs on racers' pages too.
    else if (room.state === "racing" && this.ticks % 5 === 0 && this.opponentAway()) this.renderProgress();
    const now = this.conn.now();
    const start = room.start_at ?? 0;
    const counting = room.state === "countdown" && start > now;
    this.countdown.hidden = !counting;
    if (counting) this.countdown.textContent = formatNumber(Math.ceil((start - now) / 1000));
    // Between a match's deals: the wait for the next one counts down.
    if (room.state === "finished" && room.match?.next_at && this.ticks % 5 === 0) {
      const line = matchLine(room, now);
      this.matchBox.replaceChildren(...(line ? [line] : []));
    }
    // The race's time left, for everyone in a race with a time limit.
    const deadline = room.time_limit && start ? start + room.time_limit * 1000 : 0;
    this.timeLeft.hidden = !(deadline && room.state === "racing" && now >= start);
    if (!this.timeLeft.hidden)
      this.timeLeft.textContent = ` · ${t("room.timeLeft", { time: formatTime(Math.max(0, deadline - now)) })}`;
    if (!start || now < start) {
      this.set.time(formatTime(0));
      return;
    }
    this.set.time(formatTime(this.elapsed()));
    // Racers' clocks and away countdowns run on spectators' pages.
    if (!this.watchGrid.hidden && room.state === "racing" && this.ticks % 5 === 0) {
      this.renderHeaders(this.currentLeader());
      this.renderField();
    }
  }
}
