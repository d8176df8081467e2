// @ts-check
/**
 * The player's own game inside a room: the board they play, the moves in flight, what
 * the server answers about them, hints, keys and auto-completion.
 *
 * It belongs to a RoomPage (`page`), which owns the connection, the room frame and the
 * status line; this class never joins, leaves or renders anything but its own board
 * and its stats.
 */

import { BoardView } from "../board.js";
import { celebrate } from "../celebrate.js";
import { icon } from "../icons.js";
import { playSound } from "../sound.js";
import { acknowledge, displayed, newPlay, receive, reject, send } from "../game.js";
import { UNKNOWN, cardLabel } from "../cards.js";
import { formatNumber, has, onLocaleChange, t } from "../i18n.js";
import {
  autoCompleteToken,
  finishToken,
  isForced,
  isTriviallyWon,
  movingCards,
  parseToken,
  passesLeft,
} from "../rules.js";
import { announce, h, statusWord } from "../ui.js";
import { foundationCount, topOf } from "../view.js";
import { describeMove } from "./room-parts.js";

/** @import { Hint } from "../board.js" */
/** @import { PendingMove, Play } from "../game.js" */
/** @import { View } from "../view.js" */
/** @import { BoardFrame, DiffFrame, ErrorFrame, HintFrame } from "../wire.js" */
/** @import { RoomPage } from "./room.js" */

const RETRY_CODES = new Set(["rate_limited", "busy", "unavailable"]);
const RETRY_MS = 400;
const AUTO_COMPLETE_MS = 90;
/**
 * Vegas scoring counts dollars: written as the active language writes an amount.
 * @type {Intl.NumberFormatOptions}
 */
const VEGAS = {
  style: "currency",
  currency: "USD",
  currencyDisplay: "narrowSymbol",
  minimumFractionDigits: 0,
  maximumFractionDigits: 0,
};

/**
 * Where a hinted move shows on the board: {source, key, target} for BoardView.setHint.
 * The marked card is the one the move picks up: for a run, its bottom card (hint `53`
 * marks the 8♣ that carries the 7♥, not the 7♥).
 * @param {View} view
 * @param {string} token
 * @returns {Hint | null}
 */
export function hintMarks(view, token) {
  const parsed = parseToken(token);
  if (!parsed) return null;
  if (parsed.kind === "D" || parsed.kind === "R") {
    const top = Math.min(3, view.stock) - 1;
    return { source: "stock", key: `s${Math.max(0, top)}`, target: top < 0 ? "stock" : null };
  }
  const { from, to } = parsed;
  const cards = movingCards(view, token);
  /** @type {Hint["source"]} */
  let source = "stock";
  if (from.kind === "waste") source = "waste";
  else if (from.kind === "foundation") source = `f${from.suit}`;
  else if (from.kind === "tableau") source = `t${from.index}`;
  /** @type {Hint["target"]} */
  let target = null;
  if (to.kind === "tableau") target = `t${to.index}`;
  else if (cards) target = `f${Math.floor(cards[0] / 13)}`;
  return { source, key: cards ? `c${cards[0]}` : null, target };
}

/**
 * A hinted move in words: "Move 8♣ onto 9♦", "Move K♠ to the empty column 3", "Move
 * A♥ to its foundation", "Draw from the stock", "Turn the waste over" (`game.hint.*`).
 * @param {View} view
 * @param {string} token
 */
export function hintMoveText(view, token) {
  const parsed = parseToken(token);
  if (!parsed) return token;
  if (parsed.kind === "D") return t("game.hint.draw");
  if (parsed.kind === "R") return t("game.hint.recycle");
  const cards = movingCards(view, token);
  const card = cards ? cardLabel(cards[0]) : t("game.hint.theCards");
  const riding = cards ? cards.length - 1 : 0;
  const to = parsed.to;
  if (to.kind === "foundation") return t("game.hint.home", { card });
  const column = to.index + 1;
  const top = topOf(view, to.index);
  /** @type {{card: string, column: number, n: number, target?: string}} */
  const values = { card, column, n: riding };
  const run = riding > 0 ? "Run" : "";
  if (top === null) return t(`game.hint.toEmpty${run}`, values);
  if (top === UNKNOWN) return t(`game.hint.ontoColumn${run}`, values);
  return t(`game.hint.onto${run}`, { ...values, target: cardLabel(top) });
}

/**
 * The words for a hint frame, built from the position the player sees.
 * @param {View} view
 * @param {HintFrame} frame
 */
export function hintText(view, frame) {
  if (frame.verdict === "won") return t("game.hint.won");
  if (frame.verdict === "lost" || !frame.m) return t("game.hint.lost");
  const move = hintMoveText(view, frame.m);
  return t(frame.verdict === "winning" ? "game.hint.winning" : "game.hint.promising", { move });
}

/**
 * Why a move was refused, in the player's language. The server's refusal carries only a
 * code and an English reason (`msg`, free text): the catalog's message for the code
 * (`errors.illegal_move`) is shown, the server's words only for a code it lacks.
 * @param {ErrorFrame} frame
 */
export function refusalText(frame) {
  const reason = has(`errors.${frame.code}`) ? t(`errors.${frame.code}`) : frame.msg;
  return t("game.refused", { reason });
}

export class OwnGame {
  /**
   * @param {RoomPage} page
   * @param {number} seat
   */
  constructor(page, seat) {
    this.page = page;
    /** @type {Play} */
    this.play = newPlay(seat);
    /** @type {BoardView | null} */
    this.board = null;
    /** @type {number | undefined} */
    this.autoTimer = undefined;
    /** @type {(() => void) | undefined} */
    this.stopCelebration = undefined;
    /** The player asked to finish the game (auto-complete while the stock has cards). */
    this.finishing = false;
    /** @type {string | null} the position the server last said is forced */
    this.forcedAt = null;
    /** @type {string | null} the position last asked about */
    this.askedAt = null;
    /** A language switch: the board names itself again (BoardView), the stats here. */
    this.unlisten = onLocaleChange(() => this.relabel());
  }

  get view() {
    return displayed(this.play, this.page.variant);
  }

  /** Still playing: the race is on, the snapshot is in, the board is not finished. */
  playing() {
    const board = this.play.board;
    return this.page.room?.state === "racing" && board.ready && board.status === "playing";
  }

  /** Draw the stats again in the active language (the board relabels itself). */
  relabel() {
    if (this.board) this.renderStats();
  }

  destroy() {
    this.unlisten();
    window.clearTimeout(this.autoTimer);
    this.stopCelebration?.();
    this.board?.destroy();
  }

  // ------------------------------------------------------------ the server's answers

  /**
   * An own `board` or `diff` frame; returns false on a gap (the page rejoins).
   * @param {BoardFrame | DiffFrame} frame
   */
  receive(frame) {
    const before = this.play.board;
    const { play, gap } = receive(this.play, frame);
    if (gap) return false;
    this.play = play;
    // A game that ends while shown (not the snapshot of one already over, on a reload).
    if (before.ready && before.status === "playing" && play.board.status !== "playing") {
      const status = play.board.status;
      this.page.finishedAt = this.page.conn.now();
      const words = status === "won" ? t("game.won") : t("game.over", { status: statusWord(status) });
      announce(words);
      this.page.say(words);
      if (status === "won") {
        this.page.message.prepend(icon("trophy"));
        this.render();
        this.won();
        return true;
      }
    }
    this.render();
    return true;
  }

  /** The game was won: the cascade (unless motion is reduced) and the win's sound. */
  won() {
    const settings = this.page.app.settings;
    if (settings.sound) playSound("win");
    const reduce = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    if (!settings.motion || reduce || !this.board) return;
    const root = this.board.root;
    const slots = ["f0", "f1", "f2", "f3"].map((name) => root.querySelector(`.slot[data-place="${name}"]`));
    this.stopCelebration = celebrate(() => slots.map((slot) => slot?.getBoundingClientRect()));
  }

  /** @param {number} id */
  acknowledge(id) {
    this.play = acknowledge(this.play, id);
  }

  /**
   * An `error` naming a move id: sent again later when the server was busy (returns
   * true: nothing to tell the player), else rolled back with the moves after it.
   * @param {ErrorFrame & {id: number}} frame
   */
  refused(frame) {
    const move = this.play.pending.find((m) => m.id === frame.id);
    if (!move) return false;
    if (RETRY_CODES.has(frame.code)) {
      window.setTimeout(() => this.transmit(move), RETRY_MS);
      return true;
    }
    this.play = reject(this.play, frame.id).play;
    this.render();
    if (this.page.app.settings.sound) playSound("refused");
    announce(refusalText(frame));
    return false;
  }

  /**
   * Mark a hint's move on the board; returns its words for the page to show.
   * @param {HintFrame} frame
   */
  showHint(frame) {
    const view = this.view;
    if (this.board) {
      this.board.setHint(frame.m ? hintMarks(view, frame.m) : null);
      this.board.root.dataset.hint = frame.m ?? "";
    }
    return hintText(view, frame);
  }

  // ------------------------------------------------------------ moves

  /** @param {PendingMove} move */
  transmit(move) {
    const room = this.page.roomId;
    this.page.conn.send(
      move.m === null ? { t: "undo", room, id: move.id } : { t: "move", room, id: move.id, m: move.m },
    );
  }

  /** Send again every move not yet confirmed (after a reconnection: ids make it safe). */
  resend() {
    for (const move of this.play.pending) this.transmit(move);
  }

  /** @param {string} token */
  sendMove(token) {
    if (!this.playing()) return;
    const before = this.view;
    const { play, id } = send(this.play, token);
    this.play = play;
    this.board?.setHint(null);
    if (this.board) this.board.root.dataset.hint = "";
    this.transmit({ id, m: token });
    if (this.page.app.settings.sound) playSound(token === "D" || token === "R" ? "draw" : "move");
    announce(describeMove(before, token));
    this.render();
  }

  /**
   * A click on the stock: turn it, or turn the waste over. Every click counts: turns of
   * the stock still in flight (not shown yet: only the server knows the cards) are
   * counted off the stock first.
   */
  stock() {
    if (!this.playing()) return;
    const view = this.view;
    const variant = this.page.variant;
    const inFlight = this.play.pending.filter((move) => move.m === "D").length;
    const left = view.stock - inFlight * variant.draw;
    if (left > 0) this.sendMove("D");
    else if ((inFlight || view.waste.length) && passesLeft(view, variant) > 0) this.sendMove("R");
    else this.page.say(view.waste.length ? t("game.stock.noPasses") : t("game.stock.empty"));
  }

  undo() {
    if (!this.playing() || !this.page.practice()) return;
    const { play, id } = send(this.play, null);
    this.play = play;
    this.transmit({ id, m: null });
    announce(t("game.undone"));
  }

  askHint() {
    if (!this.playing() || !this.page.practice()) return;
    this.page.say(t("game.hint.thinking"));
    this.page.conn.request({ t: "hint", room: this.page.roomId }).catch(() => {});
  }

  /**
   * Keys of the help overlay; returns true when the key was used.
   * @param {KeyboardEvent} event
   */
  key(event) {
    const board = this.board;
    if (!board || !this.playing()) return false;
    const key = event.key.toLowerCase();
    const target = event.target instanceof Element ? event.target : null;
    if (/^[1-7]$/.test(key)) board.pressColumn(Number(key) - 1);
    else if (key === "w") board.pickUp({ kind: "waste" });
    else if (key === "f") board.drop({ kind: "foundation" });
    else if (key === "d" || (key === " " && !target?.closest(".slot, button, a"))) this.stock();
    else if (key === "escape") board.putDown();
    else if (key === "u" || (key === "z" && (event.ctrlKey || event.metaKey))) this.undo();
    else if (key === "h") this.askHint();
    else return false;
    return true;
  }

  /**
   * Auto-completion can be offered: the rest of the game is forced (`isForced`) and
   * the stock or waste still has cards (with them empty, a game that is not a race
   * finishes by itself, and a race board is finished by the server).
   */
  canFinish() {
    const view = this.view;
    if (!this.playing() || this.finishing || isTriviallyWon(view)) return false;
    return isForced(view, this.page.variant) || this.forcedAt === this.positionKey();
  }

  /** Which position the board is at (moves and undos made, and moves in flight). */
  positionKey() {
    return `${this.play.board.lastId}:${this.play.board.moves}:${this.play.pending.length}`;
  }

  /**
   * In a practice game whose cards are all face up but whose stock's order decides
   * (limited passes, draw 3), ask the server whether the rest is forced (`finish`):
   * the answer says only that.
   */
  checkForced() {
    const view = this.view;
    const allUp = view.tableau.every(([down, cards]) => down === 0 && !cards.includes(UNKNOWN));
    if (!allUp || !this.page.practice() || this.play.pending.length || !this.playing()) return;
    if (isForced(view, this.page.variant) || isTriviallyWon(view)) return;
    const key = this.positionKey();
    if (this.askedAt === key) return;
    this.askedAt = key;
    this.page.conn.request({ t: "finish", room: this.page.roomId }).then(
      (frame) => {
        if (frame.ok && this.askedAt === key) {
          this.forcedAt = key;
          this.page.renderTools();
        }
      },
      () => {},
    );
  }

  /** The player asked to finish: the moves are made one at a time, as they are shown. */
  finish() {
    if (!this.canFinish()) return;
    this.finishing = true;
    announce(t("game.finishing"));
    this.render();
  }

  /**
   * Make the next move of an auto-completion: one the player asked for (`finish`), or
   * a game that is not a race and is won in all but name, one foundation move at a time
   * (races do this on the server, which adds the moves at once). A turn of the stock
   * waits for the server's answer, which shows the card turned.
   */
  autoComplete() {
    if (this.autoTimer || !this.playing()) return;
    const view = this.view;
    const variant = this.page.variant;
    // Once the player asked, the verdict (this client's or the server's) holds to the
    // end: these are the moves played to decide it.
    const asked = this.finishing;
    if (!asked && (this.page.room?.kind === "race" || !isTriviallyWon(view))) return;
    if (this.play.pending.length > (asked ? 0 : 3)) return;
    const token = asked ? finishToken(view, variant) : autoCompleteToken(view);
    if (!token) return;
    this.autoTimer = window.setTimeout(() => {
      this.autoTimer = undefined;
      const now = this.view;
      const still = asked ? finishToken(now, variant) : isTriviallyWon(now) && autoCompleteToken(now);
      if (this.playing() && still === token) this.sendMove(token);
      else this.autoComplete(); // the board changed meanwhile: decide again from it
    }, AUTO_COMPLETE_MS);
  }

  // ------------------------------------------------------------ rendering

  /** Draw the board (created in `holder` on first use) and the stats. */
  render() {
    const page = this.page;
    if (page.raceLayout.hidden) return;
    if (!this.board) {
      const holder = h("div", { "data-testid": "own-board" });
      page.ownWrap.replaceChildren(holder);
      page.ownWrap.hidden = false;
      this.board = new BoardView(holder, {
        interactive: true,
        variant: page.variant,
        label: () => t("game.board.yours"),
        fitHeight: true,
        onMove: (token) => this.sendMove(token),
        onStock: () => this.stock(),
      });
    }
    this.board.variant = page.variant;
    this.board.autoMove = page.app.settings.autoMove;
    if (this.play.board.ready) this.board.update(this.view);
    // Confirmed state, for tools and tests that watch the page.
    Object.assign(this.board.root.dataset, {
      moves: String(this.play.board.moves),
      pending: String(this.play.pending.length),
      status: this.play.board.status,
    });
    this.renderStats();
    page.renderTools();
    this.checkForced();
    this.autoComplete();
  }

  /** The player changed a setting: one-click moves apply from the next click on. */
  settingsChanged() {
    if (this.board) this.board.autoMove = this.page.app.settings.autoMove;
    this.renderStats();
  }

  renderStats() {
    const view = this.view;
    const found = foundationCount(view);
    const set = this.page.set;
    set.moves(String(this.play.board.moves + this.play.pending.length));
    set.found(`${found}/52`);
    set.pass(`${view.pass}/${this.page.variant.passes ?? "∞"}`);
    const vegas = this.page.app.settings.scoring === "vegas";
    set.score(vegas ? formatNumber(-52 + 5 * found, VEGAS) : String(this.play.board.score));
  }
}
