// @ts-check
/**
 * Your account (`#/account`), reached from Settings. A guest makes itself an account
 * here (a username, then a passkey or a password) or signs in to one it has (a passkey,
 * or a username and password); a signed-in player sees its devices (sessions, from
 * `GET /api/me/account`) and signs one of them, this one, or all of them out
 * (docs/protocol.md section 2b). After `signed_in` the page's connection says hello again
 * with the new token (`Connection.adopt`): the games, statistics and streaks the page
 * shows from then on are the account's. A signed-in player also has its bot accounts
 * here (`account-bots.js`). Every text is the catalog's (`account.*`).
 */

import { formatDateTime, t } from "../i18n.js";
import { errorText, getJSON, h, rerender } from "../ui.js";
import { BotAccountsSection } from "./account-bots.js";
import { profileHash } from "./profile.js";

/** @import { App } from "../main.js" */
/** @import { AccountAnswer, AccountSession } from "../wire.js" */

/**
 * Bytes of base64url text.
 * @param {string} text
 */
export function fromBase64url(text) {
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

/**
 * Base64url text of bytes (no padding).
 * @param {ArrayBuffer | ArrayBufferView} bytes
 */
export function toBase64url(bytes) {
  const view =
    bytes instanceof ArrayBuffer
      ? new Uint8Array(bytes)
      : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let text = "";
  for (const byte of view) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The server's options (JSON text) as `navigator.credentials` takes them: the
 * challenge, the user's id and the credential ids as bytes.
 * @param {string} text
 * @returns {any}
 */
export function publicKeyOptions(text) {
  const options = JSON.parse(text);
  options.challenge = fromBase64url(options.challenge);
  if (options.user) options.user.id = fromBase64url(options.user.id);
  for (const list of [options.excludeCredentials, options.allowCredentials]) {
    for (const descriptor of list ?? []) descriptor.id = fromBase64url(descriptor.id);
  }
  return options;
}

/**
 * A credential as the server reads it back (`PublicKeyCredential.toJSON()`'s shape).
 * @param {PublicKeyCredential} credential
 */
export function credentialJSON(credential) {
  const response = /** @type {any} */ (credential.response);
  /** @type {Record<string, string | null>} */
  const answer = { clientDataJSON: toBase64url(response.clientDataJSON) };
  if (response.attestationObject) {
    answer.attestationObject = toBase64url(response.attestationObject);
  } else {
    answer.authenticatorData = toBase64url(response.authenticatorData);
    answer.signature = toBase64url(response.signature);
    answer.userHandle = response.userHandle ? toBase64url(response.userHandle) : null;
  }
  return JSON.stringify({
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: credential.type,
    response: answer,
    clientExtensionResults: credential.getClientExtensionResults(),
    authenticatorAttachment: credential.authenticatorAttachment ?? null,
  });
}

/**
 * Whether passkeys can be used here: a browser that has them, on a page opened by host
 * name (an RP id is never an IP address: `localhost`, not `127.0.0.1`).
 */
export function passkeysSupported() {
  const byAddress = /^[\d.]+$/.test(location.hostname) || location.hostname.includes(":");
  return typeof window.PublicKeyCredential === "function" && Boolean(navigator.credentials) && !byAddress;
}

/**
 * A device's browser in a few words: its name from the User-Agent, or the agent cut short.
 * @param {string} agent
 */
export function browserName(agent) {
  for (const [pattern, name] of /** @type {[RegExp, string][]} */ ([
    [/Edg\//, "Edge"],
    [/Firefox\//, "Firefox"],
    [/Chrome\//, "Chrome"],
    [/Safari\//, "Safari"],
  ])) {
    if (pattern.test(agent)) {
      const system = /Android/.test(agent)
        ? "Android"
        : /iPhone|iPad/.test(agent)
          ? "iOS"
          : /Windows/.test(agent)
            ? "Windows"
            : /Mac OS X/.test(agent)
              ? "macOS"
              : /Linux/.test(agent)
                ? "Linux"
                : "";
      return system ? `${name} · ${system}` : name;
    }
  }
  return agent.slice(0, 40) || t("account.sessions.unknownBrowser");
}

export class AccountPage {
  /** @param {App} app */
  constructor(app) {
    this.app = app;
    /** @type {HTMLElement | null} */
    this.root = null;
    /** @type {AccountAnswer | null} the signed-in account, once loaded */
    this.account = null;
    /** @type {{text: () => string, error: boolean} | null} the last outcome, shown in the status line */
    this.status = null;
    this.busy = false;
    /** @type {(() => void) | null} */
    this.offOpen = null;
    /** the bot accounts this account owns (a section of the page) */
    this.botSection = new BotAccountsSection(app, () => this.relabel());
  }

  /** @param {HTMLElement} root */
  mount(root) {
    this.root = root;
    root.append(this.build());
    // Every (re)connection may change who this is: a sign-in, a sign-out elsewhere.
    this.offOpen = this.app.connection().on("open", () => this.load());
    this.load();
  }

  unmount() {
    this.offOpen?.();
    this.root = null;
  }

  relabel() {
    if (this.root) rerender(this.root, () => this.build());
  }

  /** The signed-in account's sessions (a guest has none to load). */
  async load() {
    const conn = await this.app.ready();
    this.account = conn.username
      ? /** @type {AccountAnswer | null} */ (await getJSON("/api/me/account").catch(() => null))
      : null;
    this.relabel();
    if (conn.username) await this.botSection.load();
  }

  /**
   * Run one account request, showing that it works and then how it went.
   * @param {() => Promise<() => string>} work resolves with the success text
   */
  async run(work) {
    if (this.busy) return;
    this.busy = true;
    this.status = { text: () => t("account.working"), error: false };
    this.relabel();
    try {
      const done = await work();
      this.status = { text: done, error: false };
    } catch (error) {
      const cancelled = error instanceof DOMException && error.name === "NotAllowedError";
      this.status = {
        text: () => (cancelled ? t("account.passkeyCancelled") : errorText(error)),
        error: true,
      };
    } finally {
      this.busy = false;
      this.relabel();
    }
  }

  /**
   * Take a new session: say hello with its token, then show who this is now.
   * @param {{token: string, username: string}} signed
   */
  async adopt(signed) {
    const conn = this.app.connection();
    const opened = new Promise((resolve) => {
      const off = conn.on("open", () => {
        off();
        resolve(null);
      });
    });
    conn.adopt(signed.token);
    await opened;
  }

  /** @param {HTMLFormElement} form */
  fields(form) {
    const data = new FormData(form);
    return { username: String(data.get("username") ?? ""), password: String(data.get("password") ?? "") };
  }

  /**
   * Make this guest an account: with a passkey, or the password typed.
   * @param {HTMLFormElement} form
   * @param {boolean} withPasskey
   */
  create(form, withPasskey) {
    const { username, password } = this.fields(form);
    return this.run(async () => {
      const conn = await this.app.ready();
      let signed;
      if (withPasskey) {
        const challenge = await conn.request({ t: "passkey_options", username });
        const credential = /** @type {PublicKeyCredential} */ (
          await navigator.credentials.create({ publicKey: publicKeyOptions(challenge.options) })
        );
        signed = await conn.request({ t: "register", username, passkey: credentialJSON(credential) });
      } else {
        signed = await conn.request({ t: "register", username, password });
      }
      await this.adopt(signed);
      return () => t("account.created", { username: signed.username });
    });
  }

  /**
   * Sign in: with a passkey, or the username and password typed.
   * @param {HTMLFormElement | null} form
   */
  signIn(form) {
    return this.run(async () => {
      const conn = await this.app.ready();
      let signed;
      if (form === null) {
        const challenge = await conn.request({ t: "passkey_options" });
        const credential = /** @type {PublicKeyCredential} */ (
          await navigator.credentials.get({ publicKey: publicKeyOptions(challenge.options) })
        );
        signed = await conn.request({ t: "sign_in", passkey: credentialJSON(credential) });
      } else {
        signed = await conn.request({ t: "sign_in", ...this.fields(form) });
      }
      await this.adopt(signed);
      return () => t("account.signedIn", { username: signed.username });
    });
  }

  /**
   * End one session, this device's (`current`), or every one.
   * @param {{session?: string, everywhere?: boolean}} which
   * @param {boolean} current whether this device is signed out by it
   */
  signOut(which, current) {
    return this.run(async () => {
      const conn = await this.app.ready();
      const ended = await conn.request({ t: "sign_out", ...which });
      if (current) {
        // This device is a new guest from now on (its connection closes with 4006).
        const opened = new Promise((resolve) => {
          const off = conn.on("open", () => {
            off();
            resolve(null);
          });
        });
        await opened;
      } else {
        await this.load();
      }
      return () => t("account.signedOut", { count: ended.ended });
    });
  }

  /** Your data: everything the server holds about you, saved as a JSON file. */
  download() {
    return this.run(async () => {
      await this.app.ready();
      const data = /** @type {{user: string, account: {username: string} | null} | null} */ (
        await getJSON("/api/me/data")
      );
      const blob = new Blob([JSON.stringify(data, null, 2)], { type: "application/json" });
      const link = h("a", {
        href: URL.createObjectURL(blob),
        download: `klondike-live-${data?.account?.username ?? data?.user ?? "data"}.json`,
        hidden: true,
      });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
      return () => t("account.data.saved");
    });
  }

  /**
   * Delete the account, confirmed by its username typed again: every session ends (this
   * device's connection closes with 4006 and comes back as a new guest).
   * @param {HTMLFormElement} form
   */
  deleteAccount(form) {
    const typed = String(new FormData(form).get("confirm") ?? "");
    return this.run(async () => {
      const conn = await this.app.ready();
      const opened = new Promise((resolve) => {
        const off = conn.on("open", () => {
          off();
          resolve(null);
        });
      });
      await conn.request({ t: "delete_account", username: typed });
      await opened;
      this.account = null;
      return () => t("account.delete.done");
    });
  }

  build() {
    const conn = this.app.conn;
    const username = conn?.username ?? null;
    const status = this.status;
    return h(
      "section.panel.account",
      { "aria-labelledby": "account-title", "data-testid": "account-page" },
      h("h1", { id: "account-title" }, t("account.title")),
      h(
        "p",
        { role: "status", "data-testid": "account-status", class: status?.error ? "error-text" : "muted" },
        status ? status.text() : "",
      ),
      username ? this.signedIn(username) : this.guest(),
      h("p", {}, h("a", { href: "#/" }, t("account.home"))),
    );
  }

  /** @param {string} username */
  signedIn(username) {
    const sessions = this.account?.sessions ?? [];
    return h(
      "div",
      {},
      h("p", { "data-testid": "account-username" }, t("account.signedInAs", { username })),
      h("h2", {}, t("account.sessions.title")),
      h("ul.list", { "data-testid": "account-sessions" }, ...sessions.map((s) => this.sessionRow(s))),
      h(
        "div.actions",
        {},
        h(
          "button",
          { type: "button", "data-testid": "account-sign-out", onclick: () => this.signOut({}, true) },
          t("account.signOut"),
        ),
        h(
          "button.ghost",
          {
            type: "button",
            "data-testid": "account-sign-out-everywhere",
            onclick: () => this.signOut({ everywhere: true }, true),
          },
          t("account.signOutEverywhere"),
        ),
      ),
      this.botSection.build(),
      h(
        "p",
        {},
        h("a", { href: profileHash({ username }), "data-testid": "account-profile" }, t("account.profile")),
      ),
      h("h2", {}, t("account.data.title")),
      h("p.muted", {}, t("account.data.intro")),
      h(
        "button.ghost",
        { type: "button", "data-testid": "account-download", onclick: () => this.download() },
        t("account.data.download"),
      ),
      this.deleteForm(username),
    );
  }

  /** @param {string} username */
  deleteForm(username) {
    const form = h(
      "form.account-form",
      {
        "data-testid": "account-delete",
        "aria-labelledby": "account-delete-title",
        onsubmit: (/** @type {Event} */ event) => {
          event.preventDefault();
          this.deleteAccount(form);
        },
      },
      h("h2", { id: "account-delete-title" }, t("account.delete.title")),
      h("p.muted", { id: "account-delete-intro" }, t("account.delete.intro")),
      h(
        "label",
        {},
        h("span", {}, t("account.delete.confirm", { username })),
        h("input", {
          name: "confirm",
          required: true,
          maxlength: "64",
          autocomplete: "off",
          "aria-describedby": "account-delete-intro",
        }),
      ),
      h("button", { type: "submit", "data-testid": "account-delete-button" }, t("account.delete.button")),
    );
    return form;
  }

  /** @param {AccountSession} session */
  sessionRow(session) {
    return h(
      "li",
      { "data-testid": session.current ? "account-session-current" : "account-session" },
      h(
        "span",
        {},
        t("account.sessions.row", {
          browser: browserName(session.agent),
          method: t(`account.method.${session.method}`),
          since: formatDateTime(session.created_at),
        }),
        session.current ? h("strong", {}, ` · ${t("account.sessions.thisDevice")}`) : null,
      ),
      session.current
        ? null
        : h(
            "button.ghost",
            {
              type: "button",
              "aria-label": t("account.sessions.endLabel", { browser: browserName(session.agent) }),
              onclick: () => this.signOut({ session: session.id }, false),
            },
            t("account.sessions.end"),
          ),
    );
  }

  guest() {
    const passkeys = passkeysSupported();
    const create = h(
      "form.account-form",
      {
        "data-testid": "account-create",
        "aria-labelledby": "account-create-title",
        onsubmit: (/** @type {Event} */ event) => {
          event.preventDefault();
          const submitter = event instanceof SubmitEvent ? event.submitter : null;
          const withPasskey = submitter?.getAttribute("name") === "passkey";
          this.create(create, withPasskey);
        },
      },
      h("h2", { id: "account-create-title" }, t("account.create.title")),
      h("p.muted", {}, t("account.create.intro")),
      h(
        "label",
        {},
        h("span", {}, t("account.username")),
        h("input", {
          name: "username",
          autocomplete: "username webauthn",
          required: true,
          minlength: "3",
          maxlength: "20",
          "aria-describedby": "account-username-hint",
        }),
      ),
      h("p.muted", { id: "account-username-hint" }, t("account.usernameHint")),
      passkeys
        ? h("button", { type: "submit", name: "passkey" }, t("account.create.passkey"))
        : h("p.muted", {}, t("account.noPasskeys")),
      h(
        "label",
        {},
        h("span", {}, t("account.password")),
        h("input", {
          name: "password",
          type: "password",
          autocomplete: "new-password",
          minlength: "8",
          maxlength: "256",
          "aria-describedby": "account-password-hint",
        }),
      ),
      h("p.muted", { id: "account-password-hint" }, t("account.passwordHint")),
      h("button.ghost", { type: "submit", name: "password" }, t("account.create.password")),
    );
    const signIn = h(
      "form.account-form",
      {
        "data-testid": "account-sign-in",
        "aria-labelledby": "account-sign-in-title",
        onsubmit: (/** @type {Event} */ event) => {
          event.preventDefault();
          this.signIn(signIn);
        },
      },
      h("h2", { id: "account-sign-in-title" }, t("account.signIn.title")),
      h("p.muted", {}, t("account.signIn.note")),
      passkeys
        ? h(
            "button",
            { type: "button", name: "passkey", onclick: () => this.signIn(null) },
            t("account.signIn.passkey"),
          )
        : null,
      h(
        "label",
        {},
        h("span", {}, t("account.username")),
        h("input", { name: "username", autocomplete: "username", required: true, maxlength: "64" }),
      ),
      h(
        "label",
        {},
        h("span", {}, t("account.password")),
        h("input", {
          name: "password",
          type: "password",
          autocomplete: "current-password",
          required: true,
          maxlength: "256",
        }),
      ),
      h("button.ghost", { type: "submit", name: "password" }, t("account.signIn.password")),
    );
    return h("div.account-forms", {}, create, signIn);
  }
}
