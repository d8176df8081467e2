// @ts-check
/**
 * A player's profile: `#/@/USERNAME` for an account, `#/@/~USERID` for a guest (or an
 * account reached by its id, from results where only the id is known: the address is
 * then replaced by its username's). From `GET /api/players/<who>/profile`
 * (docs/protocol.md section 10): the name, account or guest, member since, statistics per
 * kind and variant with streaks, daily results, tournaments, recent games, and your
 * record against the player. A deleted account answers 410 (it says so), nobody 404.
 *
 * Names are shown as text, never as markup, each isolated for bidirectional text (`bdi`),
 * so a name in another script or holding direction controls cannot reorder what is
 * around it. Under the name, `profile-actions` holds what you can do about the player:
 * Follow (`follow.js`), knowing whether you follow them already from your `friends`
 * list (docs/client.md, *Profiles*). Every text is the catalog's (`profile.*`).
 */

import { formatDate, formatNumber, t } from "../i18n.js";
import { describeVariant, parseVariant } from "../rules.js";
import { followButton } from "../follow.js";
import { errorText, formatTime, getJSON, h, HttpError, rerender } from "../ui.js";
import { shownName } from "./bots.js";
import { ago, opponentName, resultParts } from "./games.js";
import { recordLine } from "./head-to-head.js";
import { kindWord, percent } from "./stats.js";

/** @import { App } from "../main.js" */
/** @import { GameOpponent, Profile } from "../wire.js" */

/** How a deleted account's id starts in others' games (docs/protocol.md section 10). */
export const DELETED_PREFIX = "deleted.";

/**
 * The address of a player's profile: by username (`#/@/Ann`) or by user id (`#/@/~g_x`).
 * @param {{user?: string, username?: string}} who
 */
export function profileHash(who) {
  if (who.username) return `#/@/${encodeURIComponent(who.username)}`;
  return `#/@/~${encodeURIComponent(who.user ?? "")}`;
}

/**
 * Whether a player can be linked to: a person with a user id, not a bot, not deleted.
 * @param {{user?: string, name: string, bot?: boolean}} who
 */
export function linkable(who) {
  return Boolean(who.user) && !who.bot && !who.user?.startsWith(DELETED_PREFIX) && who.name !== "";
}

/**
 * A player's name as a link to its profile (text isolated in a `bdi`), or the name alone
 * for a bot or a deleted player.
 * @param {{user?: string, name: string, bot?: boolean, level?: string}} who
 * @param {string} [shown] the name as shown (default: `shownName`)
 */
export function playerLink(who, shown) {
  const name = h("bdi", {}, shown ?? shownName(who));
  if (!linkable(who)) return name;
  return h("a.player-link", { href: profileHash({ user: who.user }), "data-testid": "player-link" }, name);
}

/**
 * The API path of a profile address's `who` (`~ID` or a username).
 * @param {string} who
 */
export function profilePath(who) {
  const key = who.startsWith("~") ? who.slice(1) : who;
  return `/api/players/${encodeURIComponent(key)}/profile`;
}

/**
 * What kind of player a profile is: an account, a bot account (with who runs it), a guest.
 * @param {Profile} p
 */
function kindLabel(p) {
  if (p.kind === "bot") return p.owner ? t("profile.botOf", { owner: p.owner }) : t("profile.bot");
  return t(p.kind === "account" ? "profile.account" : "profile.guest");
}

export class ProfilePage {
  /**
   * @param {App} app
   * @param {string} who the address's part after `#/@/` (decoded)
   */
  constructor(app, who) {
    this.app = app;
    this.who = who;
    /** @type {HTMLElement | null} */
    this.root = null;
    /** @type {{state: "loading"} | {state: "loaded", profile: Profile} | {state: "missing", gone: boolean} | {state: "failed", error: unknown}} */
    this.shown = { state: "loading" };
    /** Whether you follow the player (from your `friends` list; false until known). */
    this.following = false;
  }

  /** @param {HTMLElement} root */
  mount(root) {
    this.root = root;
    root.append(this.build());
    this.load();
  }

  unmount() {
    this.root = null;
  }

  relabel() {
    if (this.root) rerender(this.root, () => this.build());
  }

  async load() {
    try {
      await this.app.ready(); // a token first: the record against the player is yours
      const profile = /** @type {Profile | null} */ (await getJSON(profilePath(this.who)));
      this.shown = profile ? { state: "loaded", profile } : { state: "missing", gone: false };
      const conn = this.app.conn;
      if (profile && conn && conn.user !== profile.user) {
        // Whether you follow them: the profile shows without it (the button then offers
        // Follow, and the server's answer to it says where you stand).
        this.following = await conn
          .request({ t: "friends" })
          .then((lists) => lists.following.some((/** @type {{user: string}} */ f) => f.user === profile.user))
          .catch(() => false);
      }
      if (profile && profile.kind !== "guest" && this.who !== profile.name) {
        window.history.replaceState(null, "", profileHash({ username: profile.name }));
      }
    } catch (error) {
      this.shown =
        error instanceof HttpError && error.status === 410
          ? { state: "missing", gone: true }
          : { state: "failed", error };
    }
    this.relabel();
  }

  build() {
    const shown = this.shown;
    /** @type {(Node | null)[]} */
    let body;
    if (shown.state === "loading") body = [h("p.muted", {}, t("profile.loading"))];
    else if (shown.state === "failed")
      body = [h("p.error-text", {}, t("profile.loadFailed", { reason: errorText(shown.error) }))];
    else if (shown.state === "missing")
      body = [
        h("p", { "data-testid": "profile-missing" }, t(shown.gone ? "profile.gone" : "profile.notFound")),
      ];
    else body = this.render(shown.profile);
    const title =
      shown.state === "loaded"
        ? h("bdi", { "data-testid": "profile-name" }, shownName(shown.profile))
        : t("profile.title");
    return h(
      "section.panel.profile",
      { "aria-labelledby": "profile-title", "data-testid": "profile-page" },
      h("h1", { id: "profile-title", style: "margin:0 0 0.5rem;font-size:1.3rem" }, title),
      ...body,
      h("p", {}, h("a", { href: "#/" }, t("profile.home"))),
    );
  }

  /** @param {Profile} p */
  render(p) {
    const me = this.app.conn?.user ?? null;
    const since =
      p.member_since === null
        ? null
        : t(p.kind === "guest" ? "profile.firstSeen" : "profile.memberSince", {
            date: formatDate(p.member_since),
          });
    const games = p.games;
    return [
      h("p.muted", { "data-testid": "profile-kind" }, [kindLabel(p), since].filter(Boolean).join(" · ")),
      h(
        "div.row.profile-actions",
        { "data-testid": "profile-actions" },
        this.app.conn && me && me !== p.user && !p.user.startsWith(DELETED_PREFIX)
          ? followButton(
              this.app.conn,
              { user: p.user, name: shownName(p) },
              { following: this.following, onChange: (now) => (this.following = now) },
            )
          : null,
      ),
      p.vs && p.vs.games > 0
        ? h(
            "p.row",
            { "data-testid": "profile-vs" },
            ...recordLine(p.vs, shownName(p), undefined, Date.now()),
            me
              ? h("a", { href: `#/me/games?opponent=${encodeURIComponent(p.user)}` }, t("games.h2h.see"))
              : null,
          )
        : null,
      h("h2", {}, t("profile.statsTitle")),
      p.categories.length
        ? h(
            "div.table-scroll",
            {},
            h(
              "table.results.stats-table",
              { "data-testid": "profile-stats" },
              h(
                "thead",
                {},
                h(
                  "tr",
                  {},
                  ...["game", "played", "won", "winRate", "bestTime", "streak", "bestStreak"].map((c) =>
                    h("th", { scope: "col" }, t(`stats.column.${c}`)),
                  ),
                ),
              ),
              h(
                "tbody",
                {},
                ...p.categories.map((c) =>
                  h(
                    "tr",
                    {},
                    h(
                      "th",
                      { scope: "row" },
                      `${kindWord(c.kind)} · ${describeVariant(parseVariant(c.variant))}`,
                    ),
                    h("td", {}, formatNumber(c.played)),
                    h("td", {}, formatNumber(c.won)),
                    h("td", {}, percent(c.win_rate)),
                    h("td", {}, c.best_ms === null ? "–" : formatTime(c.best_ms)),
                    h("td", {}, formatNumber(c.streak)),
                    h("td", {}, formatNumber(c.best_streak)),
                  ),
                ),
              ),
            ),
          )
        : h("p.muted", {}, t("profile.noStats")),
      h("h2", {}, t("profile.dailyTitle")),
      p.daily.recent.length
        ? h(
            "ul.list",
            { "data-testid": "profile-daily" },
            h(
              "li.muted",
              {},
              t("profile.dailyStreak", {
                streak: p.daily.stats.streak,
                longest: p.daily.stats.longest_streak,
              }),
            ),
            ...p.daily.recent.map((d) =>
              h(
                "li",
                {},
                t(d.won ? "profile.dailyWon" : "profile.dailyLost", {
                  date: formatDate(Date.parse(`${d.date}T12:00:00Z`)),
                  variant: describeVariant(parseVariant(d.variant)),
                  time: d.time_ms === null ? "–" : formatTime(d.time_ms),
                  found: d.found,
                }),
              ),
            ),
          )
        : h("p.muted", {}, t("profile.noDaily")),
      h("h2", {}, t("profile.tournamentsTitle")),
      p.tournaments.length
        ? h(
            "ul.list",
            { "data-testid": "profile-tournaments" },
            ...p.tournaments.map((x) =>
              h("li", {}, h("a", { href: `#/t/${encodeURIComponent(x.id)}` }, h("bdi", {}, x.name))),
            ),
          )
        : h("p.muted", {}, t("profile.noTournaments")),
      h("h2", {}, t("profile.gamesTitle")),
      games.length
        ? h(
            "ul.list",
            { "data-testid": "profile-games" },
            ...games.map((g) => {
              const { won, detail } = resultParts(g);
              return h(
                "li",
                {},
                h(
                  "a",
                  { href: `#/replay/${encodeURIComponent(g.room)}/${g.gen}` },
                  t("profile.gameLine", {
                    kind: kindWord(g.kind),
                    variant: describeVariant(parseVariant(g.variant)),
                    result: t(won ? "games.result.won" : "games.result.lost"),
                    detail,
                    when: ago(g.ended_at, Date.now()),
                  }),
                ),
                g.opponents.length ? " · " : null,
                ...opponentLinks(g.opponents),
              );
            }),
          )
        : h("p.muted", {}, t("profile.noGames")),
    ];
  }
}

/**
 * A game's other players, each linked to its profile, separated by commas.
 * @param {GameOpponent[]} opponents
 */
export function opponentLinks(opponents) {
  return opponents.flatMap((o, i) => [i ? ", " : null, playerLink(o, opponentName(o))]);
}
