"""Bot accounts that an account owns: create, list, issue a new token, delete.

    owned = BotAccounts(accounts, BotRecords(history))
    made = await owned.create(caller, "AnnBot")      # `BotToken`: the token, once
    bots = await owned.listing(caller)               # [{user, username, created_at, token_at}]
    made = await owned.new_token(caller, bot_user)   # the old token ends on every node
    await owned.delete(caller, bot_user)             # its tokens end; its games stay

Only an account's session may ask (not a guest, not a bot: `not_signed_in`). A bot's
username follows the rules of every username (`accounts.usernames`) and is unique
across people and bots. Its token (`auth.mint_owned_bot_token`) names a token id
(`sid`) stored as a `sessions` row of method `bot` and a live key in Valkey, exactly
like an account's session: `Accounts.check` accepts it while it lasts, and ending it
(a new token, the bot deleted) closes its connections on every node (close code 4006)
and has every node refuse it (`token_revoked`). The token itself is stored nowhere.
Operator bot tokens (`klondike-live token --bot`) have no `sid` and are not touched.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from typing import Any, Final

from klondike_live.accounts.usernames import check_username
from klondike_live.auth import BOT_LIFETIME_SECONDS, mint_owned_bot_token
from klondike_live.errors import Refusal
from klondike_live.history.accounts import AccountTaken, SessionRow
from klondike_live.history.bots import BOT_METHOD, BotRecords, BotRow, TooManyBots
from klondike_live.protocol.codes import ErrorCode
from klondike_live.service.accounts import Accounts, Caller

__all__ = ["MAX_BOTS", "BotAccounts", "BotToken"]

log = logging.getLogger(__name__)

MAX_BOTS: Final = 5
"""How many bot accounts one account may own."""


@dataclass(frozen=True, slots=True)
class BotToken:
    """A bot account and its new token (shown to its owner once)."""

    user: str
    username: str
    token: str

    def wire(self) -> dict[str, Any]:
        return {"user": self.user, "username": self.username, "token": self.token}


def _wire(row: BotRow) -> dict[str, Any]:
    return {
        "user": row.user_id,
        "username": row.username,
        "created_at": row.created_at,
        "token_at": row.token_at,
    }


class BotAccounts:
    """The bot accounts of accounts (see the module docstring)."""

    def __init__(self, accounts: Accounts, records: BotRecords) -> None:
        self.accounts = accounts
        self.records = records

    def _owner(self, caller: Caller) -> str:
        identity = caller.identity
        if identity.session is None or identity.bot or identity.guest:
            raise Refusal(ErrorCode.NOT_SIGNED_IN, "only an account can own bot accounts")
        return identity.user_id

    def _token_row(self, bot: str, now: int) -> tuple[str, SessionRow]:
        token_id = secrets.token_urlsafe(18)
        expires = now + BOT_LIFETIME_SECONDS * 1000
        return token_id, SessionRow(token_id, bot, BOT_METHOD, "", now, expires)

    async def _issue(self, bot: str, username: str, token_id: str) -> BotToken:
        """Sign the bot's token and make its id live in Valkey."""
        token, _ = mint_owned_bot_token(self.accounts.keys, bot, username, token_id)
        await self.accounts.store.keep_session(token_id, bot, username, BOT_LIFETIME_SECONDS * 1000)
        return BotToken(bot, username, token)

    async def create(self, caller: Caller, username: str) -> BotToken:
        """A new bot account of the caller's, and its first token."""
        owner = self._owner(caller)
        try:
            shown, key = check_username(username)
        except ValueError as exc:
            raise Refusal(ErrorCode.BAD_USERNAME, str(exc)) from None
        bot = "b_" + secrets.token_urlsafe(12)
        token_id, row = self._token_row(bot, self.accounts.now_ms())
        try:
            await self.records.create(owner, bot, shown, key, row, row.created_at, limit=MAX_BOTS)
        except TooManyBots:
            raise Refusal(
                ErrorCode.TOO_MANY_BOTS, f"an account may own at most {MAX_BOTS} bots"
            ) from None
        except AccountTaken:
            raise Refusal(ErrorCode.USERNAME_TAKEN, "that username is taken") from None
        log.info("bot account %s made by %s", bot, owner)
        return await self._issue(bot, shown, token_id)

    async def listing(self, caller: Caller) -> list[dict[str, Any]]:
        """The caller's bot accounts, oldest first."""
        return [_wire(row) for row in await self.records.of(self._owner(caller))]

    async def _owned(self, caller: Caller, bot: str) -> BotRow:
        found = await self.records.owned(self._owner(caller), bot)
        if found is None:
            raise Refusal(ErrorCode.NO_BOT, "you have no bot account of that id")
        return found

    async def new_token(self, caller: Caller, bot: str) -> BotToken:
        """A new token for the caller's bot; its other tokens end on every node."""
        found = await self._owned(caller, bot)
        token_id, row = self._token_row(bot, self.accounts.now_ms())
        ended = await self.records.replace_token(bot, row)
        await self.accounts.store.end_sessions(ended)
        return await self._issue(bot, found.username, token_id)

    async def delete(self, caller: Caller, bot: str) -> list[dict[str, Any]]:
        """Delete the caller's bot: its tokens end on every node, then its row goes
        (its games stay in history under its name); the bots left."""
        await self._owned(caller, bot)
        await self.accounts.end_sessions(bot)
        await self.records.delete(bot)
        log.info("bot account %s deleted", bot)
        return await self.listing(caller)
