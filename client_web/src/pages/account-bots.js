// @ts-check
/**
 * The "Bots" section of your account page (`#/account`): the bot accounts you own
 * (docs/protocol.md section 2b). Create one by its username; its token is shown here
 * once, with a Copy button, and never again (the server keeps only the token's id);
 * each bot in the list gets a new token (the old one stops working on every node) or
 * is deleted after a confirmation. Every text is the catalog's (`account.bots.*`).
 */

import { formatDateTime, t } from "../i18n.js";
import { errorText, h } from "../ui.js";

/** @import { App } from "../main.js" */
/** @import { BotAccountRow } from "../wire.js" */

export class BotAccountsSection {
  /**
   * @param {App} app
   * @param {() => void} redraw draws the account page again
   */
  constructor(app, redraw) {
    this.app = app;
    this.redraw = redraw;
    /** @type {BotAccountRow[] | null} null until loaded */
    this.bots = null;
    /** @type {{username: string, token: string} | null} a token to show once */
    this.shown = null;
    /** @type {string | null} the bot whose deletion waits for a confirmation */
    this.confirming = null;
    /** @type {{text: () => string, error: boolean} | null} */
    this.status = null;
    this.busy = false;
  }

  async load() {
    try {
      const conn = await this.app.ready();
      this.bots = (await conn.request({ t: "bots" })).bots;
    } catch (error) {
      this.status = { text: () => errorText(error), error: true };
    }
    this.redraw();
  }

  /**
   * Run one bot request; `work` resolves with the success text.
   * @param {() => Promise<() => string>} work
   */
  async run(work) {
    if (this.busy) return;
    this.busy = true;
    this.status = { text: () => t("account.working"), error: false };
    this.redraw();
    try {
      this.status = { text: await work(), error: false };
    } catch (error) {
      this.status = { text: () => errorText(error), error: true };
    } finally {
      this.busy = false;
      this.redraw();
    }
  }

  /** @param {HTMLFormElement} form */
  create(form) {
    const username = String(new FormData(form).get("username") ?? "");
    return this.run(async () => {
      const conn = await this.app.ready();
      const made = await conn.request({ t: "bot_create", username });
      this.shown = { username: made.username, token: made.token };
      this.bots = (await conn.request({ t: "bots" })).bots;
      return () => t("account.bots.created", { username: made.username });
    });
  }

  /** @param {BotAccountRow} bot */
  newToken(bot) {
    return this.run(async () => {
      const conn = await this.app.ready();
      const made = await conn.request({ t: "bot_new_token", user: bot.user });
      this.shown = { username: made.username, token: made.token };
      this.bots = (await conn.request({ t: "bots" })).bots;
      return () => t("account.bots.issued", { username: made.username });
    });
  }

  /** @param {BotAccountRow} bot */
  remove(bot) {
    return this.run(async () => {
      const conn = await this.app.ready();
      this.bots = (await conn.request({ t: "bot_delete", user: bot.user })).bots;
      this.confirming = null;
      if (this.shown?.username === bot.username) this.shown = null;
      return () => t("account.bots.deleted", { username: bot.username });
    });
  }

  build() {
    const status = this.status;
    const form = h(
      "form.account-form",
      {
        "data-testid": "bots-create",
        "aria-labelledby": "bots-create-title",
        onsubmit: (/** @type {Event} */ event) => {
          event.preventDefault();
          this.create(form);
        },
      },
      h("h3", { id: "bots-create-title" }, t("account.bots.createTitle")),
      h(
        "label",
        {},
        h("span", {}, t("account.bots.name")),
        h("input", {
          name: "username",
          required: true,
          minlength: "3",
          maxlength: "20",
          autocomplete: "off",
          "aria-describedby": "bots-name-hint",
        }),
      ),
      h("p.muted", { id: "bots-name-hint" }, t("account.bots.nameHint")),
      h("button", { type: "submit" }, t("account.bots.create")),
    );
    return h(
      "section.account-bots",
      { "aria-labelledby": "bots-title", "data-testid": "account-bots" },
      h("h2", { id: "bots-title" }, t("account.bots.title")),
      h("p.muted", {}, t("account.bots.intro")),
      h(
        "p",
        { role: "status", "data-testid": "bots-status", class: status?.error ? "error-text" : "muted" },
        status ? status.text() : "",
      ),
      this.shown ? this.tokenBox(this.shown) : null,
      this.bots === null
        ? null
        : this.bots.length
          ? h("ul.list", { "data-testid": "bots-list" }, ...this.bots.map((bot) => this.row(bot)))
          : h("p.muted", { "data-testid": "bots-none" }, t("account.bots.none")),
      form,
    );
  }

  /** @param {{username: string, token: string}} shown */
  tokenBox(shown) {
    const label = t("account.bots.tokenLabel", { username: shown.username });
    const input = h("input", {
      value: shown.token,
      readonly: true,
      "aria-label": label,
      "data-testid": "bots-token",
    });
    const copy = h(
      "button",
      {
        type: "button",
        "data-testid": "bots-token-copy",
        onclick: async () => {
          input.select();
          try {
            await navigator.clipboard.writeText(shown.token);
          } catch {
            document.execCommand?.("copy");
          }
          copy.textContent = t("account.bots.copied");
        },
      },
      t("account.bots.copy"),
    );
    return h(
      "div.bot-token",
      { role: "group", "aria-label": label, "data-testid": "bots-token-box" },
      h("p", {}, h("strong", {}, t("account.bots.once", { username: shown.username }))),
      h("div.invite", {}, input, copy),
      h(
        "button.ghost",
        {
          type: "button",
          "data-testid": "bots-token-hide",
          onclick: () => {
            this.shown = null;
            this.redraw();
          },
        },
        t("account.bots.hide"),
      ),
    );
  }

  /** @param {BotAccountRow} bot */
  row(bot) {
    const text = t("account.bots.row", {
      username: bot.username,
      created: formatDateTime(bot.created_at),
      issued: formatDateTime(bot.token_at ?? bot.created_at),
    });
    const confirming = this.confirming === bot.user;
    return h(
      "li.bot-row",
      { "data-testid": "bots-row" },
      h("span", {}, text),
      confirming
        ? h(
            "div.actions",
            { role: "group", "aria-label": t("account.bots.confirmDelete", { username: bot.username }) },
            h("span", {}, t("account.bots.confirmDelete", { username: bot.username })),
            h(
              "button",
              { type: "button", "data-testid": "bots-delete-confirm", onclick: () => this.remove(bot) },
              t("account.bots.deleteConfirm"),
            ),
            h(
              "button.ghost",
              {
                type: "button",
                onclick: () => {
                  this.confirming = null;
                  this.redraw();
                },
              },
              t("account.bots.cancel"),
            ),
          )
        : h(
            "div.actions",
            {},
            h(
              "button.ghost",
              {
                type: "button",
                "data-testid": "bots-new-token",
                "aria-label": t("account.bots.newTokenLabel", { username: bot.username }),
                onclick: () => this.newToken(bot),
              },
              t("account.bots.newToken"),
            ),
            h(
              "button.ghost",
              {
                type: "button",
                "data-testid": "bots-delete",
                "aria-label": t("account.bots.deleteLabel", { username: bot.username }),
                onclick: () => {
                  this.confirming = bot.user;
                  this.redraw();
                },
              },
              t("account.bots.delete"),
            ),
          ),
    );
  }
}
