// @ts-check
/**
 * Your friends (`#/friends`, linked from the home page): the players you follow, each
 * with whether they are online and what they are doing (racing, in a lobby, watching,
 * playing solo), with a link to watch or join when their room is public, a *Challenge*
 * (a race of the chosen variant; they see it on whatever page they are on) while they
 * are online, *Unfollow* and *Block*; the players who follow you, with *Follow* back and
 * *Block*; and whom you blocked, with *Unblock* (docs/protocol.md section 7h). The lists
 * are read again every few seconds while the page is open. Every text is the catalog's
 * (`friends.*`).
 */

import { followButton } from "../follow.js";
import { t } from "../i18n.js";
import { ServerError } from "../net.js";
import { describeVariant, parseVariant } from "../rules.js";
import { errorText, h, rerender } from "../ui.js";
import { QUICK_VARIANTS } from "./quick.js";

/** @import { App } from "../main.js" */
/** @import { FriendEntry, FriendsFrame, PersonEntry, ServerFrame } from "../wire.js" */

/** How often the lists (and their presence) are read again (ms). */
const REFRESH_MS = 10_000;

export class FriendsPage {
  /** @param {App} app */
  constructor(app) {
    this.app = app;
    this.conn = app.connection();
    /** @type {FriendsFrame | null} */
    this.lists = null;
    /** @type {HTMLElement | null} */
    this.root = null;
    this.status = h("p.muted", { role: "status", "data-testid": "friends-status" });
    /** @type {string} the variant a challenge is for */
    this.variant = QUICK_VARIANTS.draw1;
    /** @type {(() => void)[]} */
    this.unbinders = [];
    /** @type {number | undefined} */
    this.timer = undefined;
  }

  /** @param {HTMLElement} root */
  mount(root) {
    this.root = root;
    this.draw();
    this.unbinders.push(this.conn.on("hello", () => this.load()));
    this.unbinders.push(this.conn.on("frame", (frame) => this.onFrame(frame)));
    if (this.conn.greeted) this.load();
    this.timer = window.setInterval(() => this.load(), REFRESH_MS);
  }

  unmount() {
    window.clearInterval(this.timer);
    for (const unbind of this.unbinders.splice(0)) unbind();
    this.root = null;
  }

  relabel() {
    if (this.root) rerender(this.root, () => this.build());
  }

  /** @param {ServerFrame} frame */
  onFrame(frame) {
    if (frame.t === "challenge_ended" && frame.reason === "declined") {
      this.status.textContent = "";
    }
  }

  async load() {
    try {
      this.lists = await this.conn.request({ t: "friends" });
      this.draw();
    } catch (error) {
      if (error instanceof ServerError) this.status.textContent = errorText(error);
    }
  }

  draw() {
    if (this.root) rerender(this.root, () => this.build());
  }

  /**
   * Send a request about `person`, then read the lists again.
   * @param {"block" | "unblock"} what
   * @param {PersonEntry} person
   */
  async relate(what, person) {
    try {
      await this.conn.request({ t: what, user: person.user, name: person.name });
      await this.load();
    } catch (error) {
      this.status.textContent = errorText(error);
    }
  }

  /** @param {FriendEntry} friend */
  async challenge(friend) {
    try {
      await this.conn.request({ t: "challenge", user: friend.user, variant: this.variant });
      this.status.textContent = t("friends.challenge.sent", { name: friend.name });
    } catch (error) {
      this.status.textContent = t("friends.challenge.failed", { reason: errorText(error) });
    }
  }

  /** What a friend is doing, in words, with a link to its room where it may be reached. */
  /** @param {FriendEntry} friend */
  presence(friend) {
    if (!friend.online) return [h("span.muted", {}, t("friends.presence.offline"))];
    const doing = friend.doing ?? "online";
    /** @type {(HTMLElement | string)[]} */
    const parts = [h("span.online", {}, t(`friends.presence.${doing}`))];
    if (friend.room && (doing === "racing" || doing === "watching")) {
      parts.push(
        " ",
        h("a", { href: `#/watch/${friend.room}`, "data-testid": "friend-watch" }, t("friends.watch")),
      );
    } else if (friend.room && doing === "lobby") {
      parts.push(
        " ",
        h("a", { href: `#/room/${friend.room}`, "data-testid": "friend-join" }, t("friends.join")),
      );
    }
    return parts;
  }

  /** @param {PersonEntry} person */
  blockButton(person) {
    return h(
      "button.ghost",
      {
        type: "button",
        "data-testid": "block",
        "aria-label": t("friends.blockName", { name: person.name }),
        onclick: () => this.relate("block", person),
      },
      t("friends.block"),
    );
  }

  build() {
    const lists = this.lists;
    const variants = h(
      "select",
      {
        name: "variant",
        onchange: (/** @type {Event} */ event) => {
          this.variant = /** @type {HTMLSelectElement} */ (event.target).value;
        },
      },
      Object.values(QUICK_VARIANTS).map((text) =>
        h("option", { value: text, selected: text === this.variant }, describeVariant(parseVariant(text))),
      ),
    );
    /** @type {HTMLElement[]} */
    const sections = [];
    if (!lists) sections.push(h("p.muted", {}, t("friends.loading")));
    else {
      const followed = new Set(lists.following.map((f) => f.user));
      sections.push(
        h(
          "section.panel",
          { "aria-labelledby": "following-title" },
          h("h2", { id: "following-title" }, t("friends.following.title")),
          h("label.row", {}, t("friends.challenge.variant"), " ", variants),
          lists.following.length
            ? h(
                "ul.people",
                { "data-testid": "following" },
                lists.following.map((friend) =>
                  h(
                    "li",
                    { "data-user": friend.user },
                    h("span.who", {}, h("strong", {}, friend.name), " ", ...this.presence(friend)),
                    h(
                      "span.row",
                      {},
                      friend.online
                        ? h(
                            "button",
                            {
                              type: "button",
                              "data-testid": "challenge",
                              "aria-label": t("friends.challenge.name", { name: friend.name }),
                              onclick: () => this.challenge(friend),
                            },
                            t("friends.challenge.button"),
                          )
                        : null,
                      followButton(this.conn, friend, { following: true, onChange: () => this.load() }),
                      this.blockButton(friend),
                    ),
                  ),
                ),
              )
            : h("p.muted", {}, t("friends.following.empty")),
        ),
        h(
          "section.panel",
          { "aria-labelledby": "followers-title" },
          h("h2", { id: "followers-title" }, t("friends.followers.title")),
          lists.followers.length
            ? h(
                "ul.people",
                { "data-testid": "followers" },
                lists.followers.map((person) =>
                  h(
                    "li",
                    { "data-user": person.user },
                    h("span.who", {}, h("strong", {}, person.name)),
                    h(
                      "span.row",
                      {},
                      followButton(this.conn, person, {
                        following: followed.has(person.user),
                        onChange: () => this.load(),
                      }),
                      this.blockButton(person),
                    ),
                  ),
                ),
              )
            : h("p.muted", {}, t("friends.followers.empty")),
        ),
        h(
          "section.panel",
          { "aria-labelledby": "blocked-title" },
          h("h2", { id: "blocked-title" }, t("friends.blocked.title")),
          lists.blocked.length
            ? h(
                "ul.people",
                { "data-testid": "blocked" },
                lists.blocked.map((person) =>
                  h(
                    "li",
                    { "data-user": person.user },
                    h("span.who", {}, h("strong", {}, person.name)),
                    h(
                      "button.ghost",
                      {
                        type: "button",
                        "data-testid": "unblock",
                        "aria-label": t("friends.unblockName", { name: person.name }),
                        onclick: () => this.relate("unblock", person),
                      },
                      t("friends.unblock"),
                    ),
                  ),
                ),
              )
            : h("p.muted", {}, t("friends.blocked.empty")),
        ),
      );
    }
    return h(
      "div.home.friends",
      {},
      h(
        "div.friends-head",
        {},
        h("h1", {}, t("friends.title")),
        h("p.muted", {}, t("friends.lead")),
        this.status,
      ),
      ...sections,
    );
  }
}
