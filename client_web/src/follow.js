// @ts-check
/**
 * The Follow control: one button that follows or unfollows a player (`follow`,
 * `unfollow`, docs/protocol.md section 7h) and shows where you stand (`aria-pressed`).
 * Any page that shows a player can place it: a race's results table, the friends page,
 * a player's profile. A refusal (a block between you) is said beside it. Every text is
 * the catalog's (`friends.follow.*`).
 */

import { t } from "./i18n.js";
import { errorText, h } from "./ui.js";

/** @import { Connection } from "./net.js" */

/**
 * A Follow / Unfollow button for `user` (shown as `name`), in a span with the place
 * where a refusal is said.
 * @param {Connection} conn the page's connection
 * @param {{user: string, name: string}} player
 * @param {{following?: boolean, onChange?: (following: boolean) => void}} [options]
 *   `following`: whether you follow them already (unknown: not yet); `onChange`: told
 *   each time that changes
 */
export function followButton(conn, player, { following = false, onChange } = {}) {
  let now = following;
  const said = h("span.error-text.follow-error", { role: "status" });
  const button = h("button.ghost", { type: "button", "data-testid": "follow" });
  const draw = () => {
    button.textContent = now ? t("friends.follow.unfollow") : t("friends.follow.follow");
    button.setAttribute("aria-pressed", String(now));
    button.setAttribute(
      "aria-label",
      t(now ? "friends.follow.unfollowName" : "friends.follow.followName", { name: player.name }),
    );
  };
  button.addEventListener("click", async () => {
    button.disabled = true;
    said.textContent = "";
    try {
      const reply = await conn.request({
        t: now ? "unfollow" : "follow",
        user: player.user,
        name: player.name,
      });
      now = reply.following;
      onChange?.(now);
    } catch (error) {
      said.textContent = errorText(error);
    } finally {
      button.disabled = false;
      draw();
    }
  });
  draw();
  return h("span.follow", { "data-user": player.user }, button, said);
}
