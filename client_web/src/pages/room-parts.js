// @ts-check
/**
 * Pieces of the room page as plain functions from data to elements: the lobby panels,
 * an opponent's (or ghost's) progress, a watched board's header, the results table,
 * and the words and choices behind them. They hold no state and send nothing. Every
 * text is the catalog's (`room.*`), in the language active when they are called.
 */

import { cardName } from "../cards.js";
import { groupedCode } from "../codes.js";
import { formatNumber, t } from "../i18n.js";
import { cardsAt, parseToken } from "../rules.js";
import { formatTime, h, statusWord } from "../ui.js";
import { labelled, shownName } from "./bots.js";
import { playerLink } from "./profile.js";

/** @import { View } from "../view.js" */
/** @import { BoardStatus, ResultsFrame, RoomFrame, RoomKind } from "../wire.js" */

/**
 * A rival's progress: cards home, face-down cards left, moves, status.
 * @typedef {{found: number, down: number, moves: number, status: BoardStatus}} Progress
 */

/**
 * Words for a move token, naming the cards the view before it shows.
 * @param {View} view
 * @param {string} token
 */
export function describeMove(view, token) {
  const parsed = parseToken(token);
  if (!parsed) return token;
  if (parsed.kind === "D") return t("room.move.stock");
  if (parsed.kind === "R") return t("room.move.waste");
  const { from, to } = parsed;
  const cards = cardsAt(view, from.kind === "tableau" ? { ...from, size: from.size ?? 1 } : from);
  const card = cards ? cardName(cards[0]) : t("room.move.cards");
  return to.kind === "foundation"
    ? t("room.move.toFoundation", { card })
    : t("room.move.toColumn", { card, column: to.index + 1 });
}

/**
 * A read-only text with its Copy button.
 * @param {string} value what is shown and copied
 * @param {{label: string, testid: string, copyLabel?: string}} options the field's
 *   accessible name, its test id, and the button's accessible name when "Copy" alone
 *   would not say what it copies
 * @returns {HTMLElement}
 */
function copyField(value, { label, testid, copyLabel }) {
  const input = h("input", {
    value,
    readonly: true,
    "aria-label": label,
    "data-testid": testid,
  });
  const copy = h(
    "button.ghost",
    {
      type: "button",
      "aria-label": copyLabel,
      "data-testid": `${testid}-copy`,
      onclick: async () => {
        input.select();
        try {
          await navigator.clipboard.writeText(value);
        } catch {
          document.execCommand?.("copy");
        }
        copy.textContent = t("room.invite.copied");
      },
    },
    t("room.invite.copy"),
  );
  return h("div.invite", {}, input, copy);
}

/**
 * A read-only invite link with its Copy button.
 * @param {string} link
 * @param {string} testid
 * @returns {HTMLElement}
 */
export function inviteField(link, testid) {
  return copyField(link, { label: t("room.invite.link"), testid });
}

/**
 * A race's room code (shown in two groups of three letters) with its Copy button.
 * @param {string} code
 * @returns {HTMLElement}
 */
export function codeField(code) {
  const field = copyField(groupedCode(code), {
    label: t("room.code.label"),
    testid: "room-code",
    copyLabel: t("room.code.copy"),
  });
  field.classList.add("room-code");
  return field;
}

/**
 * The invite panel and the seats panel with ready and start buttons (and, for the host,
 * a button to take each bot off its seat).
 * @param {RoomFrame} room
 * @param {string | null} user
 * @param {string} link the invite link
 * @param {{onReady: (ready: boolean) => void, onStart: () => void,
 *   onRemoveBot: (seat: number) => void}} actions
 */
export function lobbyPanels(room, user, link, { onReady, onStart, onRemoveBot }) {
  const invite = inviteField(link, "invite-link");
  const seated = room.seats.filter((s) => s !== null);
  const me = seated.find((s) => s.user === user);
  const seats = h(
    "ul.list.seats",
    { "data-testid": "seats" },
    room.seats.map((s, i) =>
      s
        ? h(
            `li${s.ready ? ".ready" : ""}${s.online ? "" : ".offline"}`,
            {},
            h("strong", {}, labelled(s)),
            h(
              "span.muted",
              {},
              s.user === room.host ? t("room.seats.host") : s.online ? "" : t("room.seats.away"),
            ),
            // The host may take a bot off its seat until the race starts.
            s.bot && room.host === user && s.user !== user
              ? h(
                  "button.ghost",
                  {
                    type: "button",
                    "data-testid": `remove-bot-${i}`,
                    "aria-label": t("room.seats.removeBotLabel", { name: shownName(s) }),
                    onclick: () => onRemoveBot(i),
                  },
                  t("room.seats.removeBot"),
                )
              : null,
          )
        : h("li.empty", {}, t("room.seats.free", { seat: i + 1 })),
    ),
  );
  const actions = h("div.row");
  if (me) {
    actions.append(
      // Once ready, "Not ready" is the secondary action: "Start race" is the main one.
      h(
        me.ready ? "button.ghost" : "button",
        { type: "button", "data-testid": "ready", onclick: () => onReady(!me.ready) },
        me.ready ? t("room.seats.notReady") : t("room.seats.ready"),
      ),
    );
    if (room.host === user) {
      const canStart = seated.length >= 2 && seated.every((s) => s.ready);
      actions.append(
        h(
          "button",
          { type: "button", "data-testid": "start", disabled: !canStart, onclick: onStart },
          t("room.seats.start"),
        ),
      );
    }
  }
  return [
    h(
      "div.panel",
      {},
      h("h2", {}, t("room.invite.title")),
      h("p.muted", {}, t("room.invite.help")),
      invite,
      room.code ? h("p.muted", {}, t("room.code.help")) : null,
      room.code ? codeField(room.code) : null,
    ),
    h(
      "div.panel",
      {},
      h("h2", {}, t("room.seats.title", { racers: seated.length, capacity: room.capacity })),
      seats,
      actions,
      room.time_limit
        ? h("p.muted", {}, t("room.seats.timeLimit", { time: formatTime(room.time_limit * 1000) }))
        : null,
    ),
  ];
}

/**
 * @param {string} className
 * @param {string} label
 * @param {number} value
 * @param {number} max
 */
function bar(className, label, value, max) {
  return h(
    className,
    {
      role: "progressbar",
      "aria-label": label,
      "aria-valuemin": "0",
      "aria-valuemax": String(max),
      "aria-valuenow": String(value),
    },
    h("span", { style: `width:${(value / max) * 100}%` }),
  );
}

/**
 * An opponent's (or a ghost's) progress: cards home, face-down cards turned, moves,
 * and for an opponent away from a race under way the time before it counts as
 * resigned (`awayLeft`, ms; null or absent when it is there).
 * @param {{key: string, name: string, p: Progress, awayLeft?: number | null}} rival
 */
export function rivalRow({ key, name, p, awayLeft = null }) {
  return h(
    "div.opponent",
    { "data-testid": key },
    h(
      "header",
      {},
      h("strong", {}, name),
      h(
        "span.row",
        {},
        awayLeft === null ? null : awayBadge(awayLeft),
        h(`span.badge${p.status === "won" ? ".won" : ""}`, {}, statusWord(p.status)),
      ),
    ),
    bar("div.bar", t("room.rival.foundBar", { name }), p.found, 52),
    bar("div.bar.down", t("room.rival.downBar", { name }), 21 - p.down, 21),
    h("small", {}, t("room.rival.summary", { found: p.found, down: p.down, moves: p.moves })),
  );
}

/**
 * "away · resigns in 0:52": a racer whose connection dropped, and the time (ms) before
 * it counts as resigned.
 * @param {number} awayLeft
 */
export function awayBadge(awayLeft) {
  return h(
    "span.badge.away",
    { "data-testid": "away" },
    t("room.watched.away", { time: formatTime(awayLeft) }),
  );
}

/**
 * The header over a watched board: name, badges, the racer's clock (null when not
 * known) and, for a racer away from a race, the time left before it counts as resigned.
 * @param {string} name
 * @param {Progress & {leader: boolean, clock: number | null, awayLeft: number | null}} state
 */
export function watchedHeader(name, { leader, status, found, down, moves, clock, awayLeft }) {
  return [
    h("strong", {}, name),
    h(
      "span.row",
      {},
      leader ? h("span.badge.lead", {}, t("room.watched.leader")) : null,
      awayLeft === null ? null : awayBadge(awayLeft),
      h(`span.badge${status === "won" ? ".won" : ""}`, {}, statusWord(status)),
      clock === null ? null : h("span.clock", { "data-testid": "racer-clock" }, formatTime(clock)),
      h("span.muted", {}, t("room.watched.summary", { found, down, moves })),
    ),
  ];
}

/**
 * The results table, with the seed when it may be shown.
 * @param {ResultsFrame} results
 * @param {{kind: RoomKind | undefined, user: string | null,
 *   follow?: (row: {user: string, name: string}) => HTMLElement}} viewer `follow`: the
 *   Follow control of another person's row (`follow.js`), where the page offers one
 */
export function resultsPanel(results, { kind, user, follow }) {
  const rows = results.ranking.map((row) =>
    h(
      `tr${row.user === user ? ".me" : ""}`,
      {},
      h("td", {}, formatNumber(row.rank)),
      h(
        "td",
        {},
        playerLink(row, labelled(row)),
        follow && !row.bot && row.user !== user ? [" ", follow(row)] : null,
      ),
      h("td", {}, statusWord(row.status)),
      h(
        "td",
        {},
        row.time_ms === null || row.time_ms === undefined ? "–" : formatTime(row.time_ms, { tenths: true }),
      ),
      h("td", {}, t("room.results.cards", { found: row.found })),
      h("td", {}, formatNumber(row.moves)),
    ),
  );
  const heads = ["rank", "player", "result", "time", "home", "moves"].map((key) => t(`room.results.${key}`));
  return [
    h("h2", {}, kind === "race" ? t("room.results.titleRace") : t("room.results.title")),
    h(
      "table.results",
      {},
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
    results.seed
      ? verifyDeal(results.seed, results.commitment, kind)
      : h("p.muted", {}, t("room.verify.later")),
  ];
}

/**
 * The shell command that prints a seed's fingerprint (a command, the same in every
 * language: not a message of the catalog).
 * @param {string} seed
 */
function checkCommand(seed) {
  return `klondike-live deal ${JSON.stringify(seed)} | sha256sum`;
}

/**
 * "Verify this deal": the seed and commitment behind a disclosure, with what they prove.
 * @param {string} seed
 * @param {string} commitment
 * @param {RoomKind | undefined} kind
 */
export function verifyDeal(seed, commitment, kind) {
  return h(
    "details.verify",
    { "data-testid": "verify" },
    h("summary", {}, t("room.verify.title")),
    h("p.muted", {}, kind === "race" ? t("room.verify.textRace") : t("room.verify.text")),
    h(
      "dl.verify-facts",
      {},
      h("dt", {}, t("room.verify.seed")),
      h("dd", {}, h("code", { "data-testid": "verify-seed" }, seed)),
      h("dt", {}, t("room.verify.commitment")),
      h("dd", {}, h("code", {}, commitment)),
      h("dt", {}, t("room.verify.check")),
      h("dd", {}, h("code", {}, checkCommand(seed))),
    ),
  );
}
