// @ts-check
/**
 * Pieces of the room page as plain functions from data to elements: the lobby panels,
 * an opponent's (or ghost's) progress, a watched board's header, the results table,
 * and the words and choices behind them. They hold no state and send nothing.
 */

import { cardName } from "../cards.js";
import { cardsAt, parseToken } from "../rules.js";
import { formatTime, h, statusWord } from "../ui.js";
import { labelled } from "./bots.js";

/** @import { Target } from "../rules.js" */
/** @import { View } from "../view.js" */
/** @import { BoardStatus, ResultsFrame, RoomFrame, RoomKind } from "../wire.js" */

/**
 * A rival's progress: cards home, face-down cards left, moves, status.
 * @typedef {{found: number, down: number, moves: number, status: BoardStatus}} Progress
 */

/** @param {Target} to */
const placeWords = (to) => (to.kind === "foundation" ? "its foundation" : `column ${to.index + 1}`);

/**
 * Words for a move token, naming the cards the view before it shows.
 * @param {View} view
 * @param {string} token
 */
export function describeMove(view, token) {
  const parsed = parseToken(token);
  if (!parsed) return token;
  if (parsed.kind === "D") return "Turned the stock";
  if (parsed.kind === "R") return "Turned the waste over";
  const { from } = parsed;
  const cards = cardsAt(view, from.kind === "tableau" ? { ...from, size: from.size ?? 1 } : from);
  const name = cards ? cardName(cards[0]) : "Cards";
  return `${name} to ${placeWords(parsed.to)}`;
}

/**
 * A read-only invite link with its Copy button.
 * @param {string} link
 * @param {string} testid
 * @returns {HTMLElement}
 */
export function inviteField(link, testid) {
  const input = h("input", {
    value: link,
    readonly: true,
    "aria-label": "Invite link",
    "data-testid": testid,
  });
  const copy = h(
    "button.ghost",
    {
      type: "button",
      onclick: async () => {
        input.select();
        try {
          await navigator.clipboard.writeText(link);
        } catch {
          document.execCommand?.("copy");
        }
        copy.textContent = "Copied";
      },
    },
    "Copy",
  );
  return h("div.invite", {}, input, copy);
}

/**
 * The invite panel and the seats panel with ready and start buttons.
 * @param {RoomFrame} room
 * @param {string | null} user
 * @param {string} link the invite link
 * @param {{onReady: (ready: boolean) => void, onStart: () => void}} actions
 */
export function lobbyPanels(room, user, link, { onReady, onStart }) {
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
            h("span.muted", {}, s.user === room.host ? "host" : s.online ? "" : "away"),
          )
        : h("li.empty", {}, `Seat ${i + 1}: free`),
    ),
  );
  const actions = h("div.row");
  if (me) {
    actions.append(
      h(
        "button",
        { type: "button", "data-testid": "ready", onclick: () => onReady(!me.ready) },
        me.ready ? "Not ready" : "I'm ready",
      ),
    );
    if (room.host === user) {
      const canStart = seated.length >= 2 && seated.every((s) => s.ready);
      actions.append(
        h(
          "button",
          { type: "button", "data-testid": "start", disabled: !canStart, onclick: onStart },
          "Start race",
        ),
      );
    }
  }
  return [
    h(
      "div.panel",
      {},
      h("h2", {}, "Invite friends"),
      h("p.muted", {}, "Anyone with this link can take a free seat or watch."),
      invite,
    ),
    h(
      "div.panel",
      {},
      h("h2", {}, `Racers ${seated.length}/${room.capacity}`),
      seats,
      actions,
      room.time_limit ? h("p.muted", {}, `Time limit ${formatTime(room.time_limit * 1000)}`) : null,
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
 * An opponent's (or a ghost's) progress: cards home, face-down cards turned, moves.
 * @param {{key: string, name: string, p: Progress}} rival
 */
export function rivalRow({ key, name, p }) {
  return h(
    "div.opponent",
    { "data-testid": key },
    h(
      "header",
      {},
      h("strong", {}, name),
      h(`span.badge${p.status === "won" ? ".won" : ""}`, {}, statusWord(p.status)),
    ),
    bar("div.bar", `${name}: cards on foundations`, p.found, 52),
    bar("div.bar.down", `${name}: face-down cards turned`, 21 - p.down, 21),
    h("small", {}, `${p.found} home · ${p.down} face down · ${p.moves} move${p.moves === 1 ? "" : "s"}`),
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
      leader ? h("span.badge.lead", {}, "leader") : null,
      awayLeft === null
        ? null
        : h("span.badge.away", { "data-testid": "away" }, `away · resigns in ${formatTime(awayLeft)}`),
      h(`span.badge${status === "won" ? ".won" : ""}`, {}, statusWord(status)),
      clock === null ? null : h("span.clock", { "data-testid": "racer-clock" }, formatTime(clock)),
      h("span.muted", {}, `${found} home · ${down} down · ${moves} move${moves === 1 ? "" : "s"}`),
    ),
  ];
}

/**
 * The results table, with the seed when it may be shown.
 * @param {ResultsFrame} results
 * @param {{kind: RoomKind | undefined, user: string | null}} viewer
 */
export function resultsPanel(results, { kind, user }) {
  const rows = results.ranking.map((row) =>
    h(
      `tr${row.user === user ? ".me" : ""}`,
      {},
      h("td", {}, String(row.rank)),
      h("td", {}, labelled(row)),
      h("td", {}, statusWord(row.status)),
      h(
        "td",
        {},
        row.time_ms === null || row.time_ms === undefined ? "–" : formatTime(row.time_ms, { tenths: true }),
      ),
      h("td", {}, `${row.found}/52`),
      h("td", {}, String(row.moves)),
    ),
  );
  const heads = ["Rank", "Player", "Result", "Time", "Cards home", "Moves"];
  return [
    h("h2", {}, kind === "race" ? "Results" : "Result"),
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
      : h("p.muted", {}, "The deal's seed is revealed when the day closes."),
  ];
}

/**
 * "Verify this deal": the seed and commitment behind a disclosure, with what they prove.
 * @param {string} seed
 * @param {string} commitment
 * @param {RoomKind | undefined} kind
 */
export function verifyDeal(seed, commitment, kind) {
  const who = kind === "race" ? "every racer had the same deal, and " : "";
  return h(
    "details.verify",
    { "data-testid": "verify" },
    h("summary", {}, "Verify this deal"),
    h(
      "p.muted",
      {},
      "The server fixed this deal before the first card was dealt and published its " +
        "commitment: a fingerprint (SHA-256) of the deal. The seed, shown now, makes the deal " +
        `again; if its fingerprint matches, ${who}no one changed the deal during the game.`,
    ),
    h(
      "dl.verify-facts",
      {},
      h("dt", {}, "Seed"),
      h("dd", {}, h("code", { "data-testid": "verify-seed" }, seed)),
      h("dt", {}, "Commitment"),
      h("dd", {}, h("code", {}, commitment)),
      h("dt", {}, "Check it"),
      h("dd", {}, h("code", {}, `klondike-live deal ${JSON.stringify(seed)} | sha256sum`)),
    ),
  );
}
