"""Follows and blocks in the history database.

    records = FriendRecords(history)
    await records.follow(me, my_name, them, their_name, now_ms)   # False: blocked
    await records.unfollow(me, them)
    await records.block(me, them, their_name, now_ms)   # ends follows both ways
    await records.unblock(me, them)
    lists = await records.lists(me)                      # a `Lists`
    await records.blocked_between(me, them)              # either way

Rows are keyed by user ids (a guest's or an account's: an account keeps its guest's id).
A name shown is the account's username where the user is an account, else the name
written with the row. A blocked player is in none of the blocker's lists: not among
those it follows (a block ends the follows both ways) nor among its followers.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import and_, delete, func, or_, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from klondike_live.history.database import History, HistoryError, reason
from klondike_live.history.schema import accounts, blocks, follows

__all__ = ["FriendRecords", "Lists", "Person"]

MAX_LISTED = 500
"""The most players one list holds (its newest)."""


@dataclass(frozen=True, slots=True)
class Person:
    user: str
    name: str


@dataclass(frozen=True, slots=True)
class Lists:
    """A player's lists: whom it follows, who follows it, whom it blocked."""

    following: list[Person]
    followers: list[Person]
    blocked: list[Person]


class FriendRecords:
    """The `follows` and `blocks` tables (see the module docstring)."""

    def __init__(self, history: History) -> None:
        self.history = history
        self.engine = history.engine

    async def blocked_between(self, one: str, other: str) -> bool:
        """Whether either of the two blocked the other."""
        rows = await self.history.rows(
            select(blocks.c.blocker).where(
                or_(
                    and_(blocks.c.blocker == one, blocks.c.blocked == other),
                    and_(blocks.c.blocker == other, blocks.c.blocked == one),
                )
            )
        )
        return bool(rows)

    async def blocks(self, blocker: str, blocked: str) -> bool:
        """Whether `blocker` blocked `blocked`."""
        rows = await self.history.rows(
            select(blocks.c.blocker).where(
                and_(blocks.c.blocker == blocker, blocks.c.blocked == blocked)
            )
        )
        return bool(rows)

    async def follows(self, follower: str, followed: str) -> bool:
        rows = await self.history.rows(
            select(follows.c.follower).where(
                and_(follows.c.follower == follower, follows.c.followed == followed)
            )
        )
        return bool(rows)

    async def follow(
        self, follower: str, follower_name: str, followed: str, followed_name: str, now_ms: int
    ) -> bool:
        """`follower` follows `followed` (again: its names are written anew); False,
        and nothing written, when either blocked the other."""
        try:
            async with self.engine.begin() as conn:
                blocked = (
                    await conn.execute(
                        select(blocks.c.blocker).where(
                            or_(
                                and_(blocks.c.blocker == follower, blocks.c.blocked == followed),
                                and_(blocks.c.blocker == followed, blocks.c.blocked == follower),
                            )
                        )
                    )
                ).first()
                if blocked is not None:
                    return False
                await conn.execute(
                    delete(follows).where(
                        and_(follows.c.follower == follower, follows.c.followed == followed)
                    )
                )
                await conn.execute(
                    follows.insert().values(
                        follower=follower,
                        followed=followed,
                        follower_name=follower_name,
                        followed_name=followed_name,
                        created_at=now_ms,
                    )
                )
        except IntegrityError:  # the same follow written at once by another request
            return True
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot follow: {reason(exc)}") from exc
        return True

    async def unfollow(self, follower: str, followed: str) -> None:
        await self._write(
            [
                delete(follows).where(
                    and_(follows.c.follower == follower, follows.c.followed == followed)
                )
            ],
            "unfollow",
        )

    async def block(self, blocker: str, blocked: str, blocked_name: str, now_ms: int) -> None:
        """`blocker` blocks `blocked`: the follows between them end, both ways."""
        await self._write(
            [
                delete(follows).where(
                    or_(
                        and_(follows.c.follower == blocker, follows.c.followed == blocked),
                        and_(follows.c.follower == blocked, follows.c.followed == blocker),
                    )
                ),
                delete(blocks).where(
                    and_(blocks.c.blocker == blocker, blocks.c.blocked == blocked)
                ),
                blocks.insert().values(
                    blocker=blocker, blocked=blocked, blocked_name=blocked_name, created_at=now_ms
                ),
            ],
            "block",
        )

    async def unblock(self, blocker: str, blocked: str) -> None:
        await self._write(
            [delete(blocks).where(and_(blocks.c.blocker == blocker, blocks.c.blocked == blocked))],
            "unblock",
        )

    async def lists(self, user: str) -> Lists:
        """Whom `user` follows, who follows it (those it blocked left out) and whom it
        blocked, each newest first."""
        shown = func.coalesce(accounts.c.username, follows.c.followed_name)
        following = await self.history.rows(
            select(follows.c.followed.label("user"), shown.label("name"))
            .select_from(follows.outerjoin(accounts, accounts.c.user_id == follows.c.followed))
            .where(follows.c.follower == user)
            .order_by(follows.c.created_at.desc(), follows.c.followed)
            .limit(MAX_LISTED)
        )
        mine = select(blocks.c.blocked).where(blocks.c.blocker == user)
        shown = func.coalesce(accounts.c.username, follows.c.follower_name)
        followers = await self.history.rows(
            select(follows.c.follower.label("user"), shown.label("name"))
            .select_from(follows.outerjoin(accounts, accounts.c.user_id == follows.c.follower))
            .where(and_(follows.c.followed == user, follows.c.follower.not_in(mine)))
            .order_by(follows.c.created_at.desc(), follows.c.follower)
            .limit(MAX_LISTED)
        )
        shown = func.coalesce(accounts.c.username, blocks.c.blocked_name)
        blocked = await self.history.rows(
            select(blocks.c.blocked.label("user"), shown.label("name"))
            .select_from(blocks.outerjoin(accounts, accounts.c.user_id == blocks.c.blocked))
            .where(blocks.c.blocker == user)
            .order_by(blocks.c.created_at.desc(), blocks.c.blocked)
            .limit(MAX_LISTED)
        )
        return Lists(
            [Person(r.user, r.name) for r in following],
            [Person(r.user, r.name) for r in followers],
            [Person(r.user, r.name) for r in blocked],
        )

    async def _write(self, statements: list[object], what: str) -> None:
        try:
            async with self.engine.begin() as conn:
                for statement in statements:
                    await conn.execute(statement)  # type: ignore[call-overload]
        except (SQLAlchemyError, OSError) as exc:
            raise HistoryError(f"cannot {what}: {reason(exc)}") from exc
