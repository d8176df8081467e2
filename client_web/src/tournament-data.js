// @ts-check
/**
 * Tournaments as plain data (docs/tournaments.md): points and ranks in words, the heat
 * under way, and the create form's fields turned into a `tournament_create` request.
 * Nothing here touches the DOM or the network. (A heat's live leaders: ranking.js.)
 */

import { formatNumber, t } from "./i18n.js";
import { formatTime } from "./ui.js";

/** @import { RoundResult, Standing, Tournament, TournamentCreateFrame, TournamentRound } from "./wire.js" */

/**
 * Points as they are shown (in the reader's language's digits): whole numbers as they
 * are, shared points with their half.
 * @param {number} points
 */
export function pointsText(points) {
  return formatNumber(points, { maximumFractionDigits: 2 });
}

/**
 * The ranks held by more than one entrant (shown as ties: "=1").
 * @param {{rank: number}[]} rows
 */
export function sharedRanks(rows) {
  /** @type {Map<number, number>} */
  const counts = new Map();
  for (const { rank } of rows) counts.set(rank, (counts.get(rank) ?? 0) + 1);
  return new Set([...counts].filter(([, n]) => n > 1).map(([rank]) => rank));
}

/**
 * A rank in words, "=2" when shared.
 * @param {number} rank
 * @param {Set<number>} shared
 */
export function rankText(rank, shared) {
  return shared.has(rank) ? `=${rank}` : String(rank);
}

/**
 * A round's result in words: a winner's time, else the cards home.
 * @param {RoundResult} row
 */
export function resultText(row) {
  return row.won
    ? t("tournament.result.won", { time: formatTime(row.time_ms, { tenths: true }) })
    : t("tournament.result.found", { n: row.found });
}

/**
 * The heat whose room is open (lobby or racing), if any.
 * @param {Tournament} t
 * @returns {TournamentRound | null}
 */
export function liveHeat(t) {
  if (t.format !== "heats") return null;
  return t.rounds.find((r) => r.room && (r.state === "lobby" || r.state === "racing")) ?? null;
}

/**
 * The heat room an entrant on the tournament page is taken to, if any: the heat that
 * has just started (this page saw it waiting in its lobby before) or whose countdown is
 * still running, so that the entrant sees the countdown in its seat (a heat the
 * organizer started early comes without warning). A heat well under way is not: an
 * entrant back on this page after its own board was done stays here.
 * @param {Tournament | null} before the tournament as this page last showed it
 * @param {Tournament} now the tournament as it is now
 * @param {string | null} user
 * @param {number} nowMs the server's clock
 * @returns {string | null}
 */
export function heatToJoin(before, now, user, nowMs) {
  const heat = liveHeat(now);
  if (!heat?.room || heat.state !== "racing" || !isEntrant(now, user)) return null;
  const was = before?.rounds.find((r) => r.round === heat.round);
  const justStarted = was?.state === "lobby" && was.room === heat.room;
  const counting = heat.start_at !== undefined && nowMs < heat.start_at;
  return justStarted || counting ? heat.room : null;
}

/**
 * Whether `user` is one of the tournament's entrants.
 * @param {Tournament} t
 * @param {string | null} user
 */
export function isEntrant(t, user) {
  return user !== null && t.entrants.some((e) => e.user === user);
}

/**
 * The standing of `user`, if entered.
 * @param {Standing[]} standings
 * @param {string | null} user
 */
export function standingOf(standings, user) {
  return standings.find((s) => s.user === user) ?? null;
}

/**
 * The replay address of a result's game (`<room>/<gen>`), or null.
 * @param {RoundResult} row
 */
export function replayHash(row) {
  const match = /^([A-Za-z0-9_-]+)\/(\d+)$/.exec(row.game ?? "");
  return match ? `#/replay/${match[1]}/${match[2]}` : null;
}

/**
 * A `datetime-local` input's value (local time) as ms since the epoch; NaN when empty.
 * @param {string} value
 */
export function localMs(value) {
  return value ? new Date(value).getTime() : Number.NaN;
}

/**
 * A time as a `datetime-local` value, to the minute, in local time.
 * @param {number} ms
 */
export function localInput(ms) {
  const d = new Date(ms);
  const pad = (/** @type {number} */ n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * A day as `YYYY-MM-DD`, in UTC (the daily challenges' days).
 * @param {number} ms
 */
export function utcDay(ms) {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * What the create form holds, as read from its controls.
 * @typedef {object} CreateFields
 * @property {string} name
 * @property {"series" | "heats"} format
 * @property {boolean} listed
 * @property {number} cap
 * @property {string} closes a `datetime-local` value
 * @property {string} from series: first day
 * @property {string} to series: last day
 * @property {string[]} dailyVariants series: one or two
 * @property {string} variant heats
 * @property {string} start heats: a `datetime-local` value
 * @property {number} heats
 * @property {number} pause seconds
 * @property {number} timeLimit seconds
 */

/**
 * The `tournament_create` request for the form's fields, or what is wrong with them as a
 * catalog key (`tournament.form.error.*`: shown with `t`, again after a language switch).
 * @param {CreateFields} f
 * @returns {{request: TournamentCreateFrame} | {error: string}}
 */
export function createRequest(f) {
  const name = f.name.trim();
  if (!name) return { error: "tournament.form.error.name" };
  const closes = localMs(f.closes);
  if (Number.isNaN(closes)) return { error: "tournament.form.error.closes" };
  /** @type {TournamentCreateFrame} */
  const base = {
    t: "tournament_create",
    name,
    format: f.format,
    variants: [],
    public: f.listed,
    cap: f.cap,
    closes_at: closes,
  };
  if (f.format === "series") {
    if (!f.from || !f.to) return { error: "tournament.form.error.days" };
    if (f.to < f.from) return { error: "tournament.form.error.dayOrder" };
    if (!f.dailyVariants.length) return { error: "tournament.form.error.dailyVariants" };
    return { request: { ...base, variants: f.dailyVariants, from: f.from, to: f.to } };
  }
  const start = localMs(f.start);
  if (Number.isNaN(start)) return { error: "tournament.form.error.start" };
  if (start < closes) return { error: "tournament.form.error.startAfterClose" };
  return {
    request: {
      ...base,
      variants: [f.variant],
      start_at: start,
      heats: f.heats,
      pause: f.pause,
      time_limit: f.timeLimit,
    },
  };
}
