"""Daily challenges and certified deals.

One certified-winnable deal per daily variant per UTC day, its leaderboard, players'
streaks, and a pool of certified deals for races. Everything shared lives in Redis
(key names in `klondike_live.keys`) while a day is open, and closed days in the history
database (`klondike_live.history.daily`), so any number of nodes can use it; the Redis
commands and scripts are in `klondike_live.store` (`daily`, `pool`), the rules here.

- `variants`: `DAILY_VARIANTS` (draw-1 one pass, draw-3 three passes), `variant_slug`,
  the daily solver budget;
- `certify`: `certify(seed, variant, budget)`, the solver in a child process, and
  `CertifiedDeal` (seed, variant, winning line, `par`);
- `pool`: `DealPool` (`take`, `size`, `add`, `run_refill`) and `PoolMetrics`;
- `days`: `daily_seed`, `prepare_day`, `ensure_days`, `run_prepare`, `load_day`,
  `DayRecord` (`public()`, `reveal(now)`), `is_closed`;
- `leaderboard`: `Leaderboard` (`record`, `page`, `around`, `rank_of`, `count`),
  `DailyResult`, `LeaderboardRow`;
- `stats`: `stats_of(attempts, today)`, an account's `PlayerStats` from its attempts;
- `cli`: `klondike-live daily prepare`.

The API, in short (`store = DailyStore(redis)`, a `klondike_live.store.daily.DailyStore`):

    pool = DealPool(PoolStore(redis), DAILY_VARIANTS, target=20, budget=Budget(5, 300_000),
                    metrics=PoolMetrics(metrics.registry))
    asyncio.create_task(pool.run_refill())            # background, one per node
    await pool.take(variant) -> CertifiedDeal | None  # never the same seed twice
    await pool.size(variant) -> int

    await prepare_day(store, secret, day, variant, budget) -> DayRecord   # idempotent
    await ensure_days(store, secret, start_date, days=7) -> list[DayRecord]  # prepare=...
    asyncio.create_task(run_prepare(clock, store, secret))   # today + 7 days, hourly
    await load_day(store, day, variant) -> DayRecord | None
    record.public() / record.reveal(now) / record.view(now); is_closed(day, now)

    board = Leaderboard(store, day, variant)
    await board.record(DailyResult(...)) -> bool      # False: the account has an entry
    await board.record_counted(result) -> int         # entries after it, 0 if refused
    await board.page(offset, limit) / board.around(user, n) / board.rank_of(user)

    stats_of([Attempt(day, variant, won, time_ms), ...], today) -> PlayerStats

Import from the modules (`klondike_live.daily.pool` ...): this package module stays
empty so that the command line can load `daily.cli` without Redis.

Nothing here may reveal the seed, deal or winning line of a day that has not closed,
or of a pooled deal, to anyone but the server: seeds are secrets until played out.
See docs/daily.md.
"""
