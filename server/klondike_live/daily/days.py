"""Daily challenges: one certified deal per daily variant per UTC day.

    record = await prepare_day(DailyStore(redis), settings.secret, date(2025, 3, 1), DRAW1)
    record.public()          # date, variant, commitment, par: safe while the day is open
    record.reveal(now)       # + seed, deal, n, solution: only once the day has closed

The seed of a day is `daily_seed(secret, date, variant, n)`, the lowercase hex of
`HMAC-SHA256(secret, "daily:" + date.isoformat() + ":" + slug + ":" + str(n))` (the slug
as in `variants.variant_slug`), for the smallest n >= 0 whose deal the solver proves
winnable within the budget. Without the server secret the seed cannot be derived from
the date. With a node budget (the default has one) the choice of n does not depend on
the machine's speed, so anyone holding the secret can check it; the time limit in the
budget is only a safety net.

The day record lives in one Redis hash per day and variant (`keys.daily_day`, read and
written by `store.daily.DailyStore`): `seed`, `n`, `par`, `commitment` (SHA-256 hex of
the deal text, `race.room.commitment`, as for races), `moves` (the certified winning
line) and the `date` and `variant` texts. It is written once, by whichever process
certifies first; later calls keep it, and each record returned is listed in
`keys.DAILY_INDEX` (the archive reads it). `run_prepare` keeps today and the next 7
days ready, checking every hour.

A day is open from 00:00 UTC of its date until 00:00 UTC of the next date
(`is_closed`). This module must never reveal a day's seed, deal or line before it
closes: `public()` holds only the date, variant, commitment and par, `reveal()` raises
`DayOpenError` for an open day, and the repr of a record leaves them out.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Final

from klondike_live.daily.certify import CertificateError, CertifiedDeal, certify
from klondike_live.daily.variants import DAILY_VARIANTS, DEFAULT_DAILY_BUDGET, variant_slug
from klondike_live.engine import Deal, Variant
from klondike_live.errors import LiveError
from klondike_live.race.room import commitment
from klondike_live.solver import Budget, SolverError
from klondike_live.solver.worker import WorkerError
from klondike_live.store import StoreError
from klondike_live.store.connect import RedisClient
from klondike_live.store.daily import DailyStore
from klondike_live.tasks import cancel_requested

__all__ = [
    "DAYS_AHEAD",
    "DEFAULT_DAILY_BUDGET",
    "MAX_ATTEMPTS",
    "DailyError",
    "DayOpenError",
    "DayRecord",
    "daily_seed",
    "day_end",
    "day_of",
    "day_start",
    "ensure_days",
    "is_closed",
    "load_day",
    "prepare_day",
    "run_prepare",
]

log = logging.getLogger(__name__)

MAX_ATTEMPTS: Final = 1000
"""Candidates tried before giving up on a day (about 30% of draw-1 deals are certified)."""

DAYS_AHEAD: Final = 7
"""`run_prepare` keeps today and this many following days ready."""

PREPARE_INTERVAL: Final = 3600.0
"""Seconds between `run_prepare` checks."""


class DailyError(LiveError, RuntimeError):
    """No certified deal could be found for a day (the budget is far too small)."""


class DayOpenError(LiveError, RuntimeError):
    """An attempt to reveal the seed or deal of a day that has not closed yet."""


def daily_seed(secret: bytes, day: date, variant: Variant, n: int) -> str:
    """Candidate `n` of the day's seed: HMAC-SHA256 of `daily:<date>:<slug>:<n>`, in hex."""
    if n < 0:
        raise ValueError(f"n must be >= 0, not {n!r}")
    message = f"daily:{day.isoformat()}:{variant_slug(variant)}:{n}"
    return hmac.new(secret, message.encode("utf-8"), hashlib.sha256).hexdigest()


def _utc(now: datetime) -> datetime:
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("a naive datetime: give an aware one (e.g. datetime.now(UTC))")
    return now.astimezone(UTC)


def day_start(day: date) -> datetime:
    """00:00 UTC of `day`: when its challenge opens."""
    return datetime.combine(day, time(0), tzinfo=UTC)


def day_end(day: date) -> datetime:
    """00:00 UTC of the next date: when `day` closes and its seed may be revealed."""
    return day_start(day + timedelta(days=1))


def day_of(now: datetime) -> date:
    """The UTC date of an aware `now`: the day whose challenge is open."""
    return _utc(now).date()


def is_closed(day: date, now: datetime) -> bool:
    """True from 00:00 UTC of the date after `day` on (`now` must be aware)."""
    return _utc(now) >= day_end(day)


@dataclass(frozen=True, slots=True)
class DayRecord:
    """One day's certified deal of one variant. The repr leaves out the secrets."""

    day: date
    variant: Variant
    seed: str = field(repr=False)
    n: int
    par: int
    commitment: str
    moves: tuple[str, ...] = field(repr=False)

    def public(self) -> dict[str, Any]:
        """What may be shown while the day is open: no seed, no deal, no line."""
        return {
            "date": self.day.isoformat(),
            "variant": str(self.variant),
            "commitment": self.commitment,
            "par": self.par,
        }

    def reveal(self, now: datetime) -> dict[str, Any]:
        """`public()` plus `seed`, `n`, `deal` (text) and `solution` (tokens).

        Raises `DayOpenError` unless the day is closed at `now`.
        """
        if not is_closed(self.day, now):
            raise DayOpenError(f"the {self.day.isoformat()} challenge is still open")
        return self.public() | {
            "seed": self.seed,
            "n": self.n,
            "deal": str(Deal.from_seed(self.seed)),
            "solution": list(self.moves),
        }

    def view(self, now: datetime) -> dict[str, Any]:
        """`reveal(now)` once the day is closed, `public()` before."""
        return self.reveal(now) if is_closed(self.day, now) else self.public()

    def to_fields(self) -> dict[str, str]:
        return {
            "date": self.day.isoformat(),
            "variant": str(self.variant),
            "seed": self.seed,
            "n": str(self.n),
            "par": str(self.par),
            "commitment": self.commitment,
            "moves": " ".join(self.moves),
        }

    @classmethod
    def from_fields(cls, data: dict[str, str]) -> DayRecord:
        return cls(
            day=date.fromisoformat(data["date"]),
            variant=Variant.parse(data["variant"]),
            seed=data["seed"],
            n=int(data["n"]),
            par=int(data["par"]),
            commitment=data["commitment"],
            moves=tuple(data["moves"].split()),
        )

    @classmethod
    def from_deal(cls, day: date, n: int, deal: CertifiedDeal) -> DayRecord:
        return cls(
            day=day,
            variant=deal.variant,
            seed=deal.seed,
            n=n,
            par=deal.par,
            commitment=commitment(Deal.from_seed(deal.seed)),
            moves=deal.moves,
        )


Preparer = Callable[[date, Variant], Awaitable[DayRecord]]
"""Prepares one day and variant (`prepare_day` with the rest of its arguments bound)."""


async def load_day(
    store: DailyStore | RedisClient, day: date, variant: Variant
) -> DayRecord | None:
    """The stored record of `day` and `variant`, or None when it is not prepared.

    `store` may be a bare client too, for tools and tests that hold only a connection.
    """
    if not isinstance(store, DailyStore):
        store = DailyStore(store)
    fields = await store.load_day(day, variant)
    return None if fields is None else DayRecord.from_fields(fields)


async def prepare_day(
    store: DailyStore,
    secret: bytes,
    day: date,
    variant: Variant,
    budget: Budget = DEFAULT_DAILY_BUDGET,
    *,
    par_budget: Budget | None = None,
) -> DayRecord:
    """The day's record: the stored one, or a new one for the smallest certified n.

    Idempotent: an existing record is kept (even one made with another secret or
    budget); when two processes prepare the same day at once, the first write wins and
    both return it. Raises `DailyError` after `MAX_ATTEMPTS` candidates.
    """
    stored = await load_day(store, day, variant)
    if stored is not None:
        await store.index_day(stored.day, stored.variant)
        return stored
    for n in range(MAX_ATTEMPTS):
        seed = daily_seed(secret, day, variant, n)
        outcome = await certify(seed, variant, budget, par_budget=par_budget)
        if outcome.deal is None:
            continue
        record = DayRecord.from_deal(day, n, outcome.deal)
        await store.create_day(day, variant, record.to_fields())
        stored = await load_day(store, day, variant)
        if stored is None:  # deleted in between: an operator's doing; keep ours
            return record
        await store.index_day(stored.day, stored.variant)
        return stored
    raise DailyError(
        f"no certified deal among {MAX_ATTEMPTS} candidates for {day.isoformat()} {variant}"
    )


async def ensure_days(
    store: DailyStore,
    secret: bytes,
    start_date: date,
    days: int = DAYS_AHEAD,
    *,
    variants: Sequence[Variant] = DAILY_VARIANTS,
    budget: Budget = DEFAULT_DAILY_BUDGET,
    par_budget: Budget | None = None,
    on_ready: Callable[[DayRecord], None] | None = None,
    prepare: Preparer | None = None,
) -> list[DayRecord]:
    """Prepare `days` consecutive days from `start_date`, every variant; date order.

    `on_ready` is called with each record as soon as it is ready (for progress bars).
    `prepare`, when given, is called instead of `prepare_day` (a server passes one that
    shares its work with requests waiting for the same day).
    """
    records = []
    for offset in range(days):
        day = start_date + timedelta(days=offset)
        for variant in variants:
            if prepare is not None:
                record = await prepare(day, variant)
            else:
                record = await prepare_day(
                    store, secret, day, variant, budget, par_budget=par_budget
                )
            if on_ready is not None:
                on_ready(record)
            records.append(record)
    return records


async def run_prepare(
    clock: Callable[[], datetime],
    store: DailyStore,
    secret: bytes,
    *,
    variants: Sequence[Variant] = DAILY_VARIANTS,
    budget: Budget = DEFAULT_DAILY_BUDGET,
    par_budget: Budget | None = None,
    days_ahead: int = DAYS_AHEAD,
    interval: float = PREPARE_INTERVAL,
    prepare: Preparer | None = None,
) -> None:
    """Keep today (by `clock`, an aware UTC time) and `days_ahead` more days ready.

    Checks every `interval` seconds until cancelled; one solver process at a time.
    Redis or solver failures are logged and retried at the next check. `prepare` as
    in `ensure_days`.
    """
    while not cancel_requested():
        today = day_of(clock())
        try:
            await ensure_days(
                store,
                secret,
                today,
                days_ahead + 1,
                variants=variants,
                budget=budget,
                par_budget=par_budget,
                prepare=prepare,
            )
        except (StoreError, WorkerError, DailyError, OSError) as exc:
            log.warning("preparing daily challenges failed, retrying later: %s", exc)
        except (SolverError, CertificateError) as exc:
            log.error("preparing daily challenges: the solver's line was rejected: %s", exc)
        await asyncio.sleep(interval)
    raise asyncio.CancelledError
