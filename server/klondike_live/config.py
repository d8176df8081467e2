"""Server settings: read once from command-line values, the environment and defaults.

`Settings.load()` is the only place that reads configuration. Explicit values (the
`serve` command's flags) beat `KLONDIKE_<NAME>` environment variables, which beat the
defaults; the defaults run the whole product on one machine. Every value is cast and
checked here, and a bad one raises `ConfigError` naming the flag or the variable that
gave it, and the value, so the rest of the server handles only typed, valid settings.

The secret that signs tokens and derives daily seeds comes from, in this order:
`KLONDIKE_SECRET`; `KLONDIKE_SECRET_FILE` (its first line; the next lines are older
secrets still accepted); with a shared Redis, when the caller asks for it (`serve`
does), the secret every such node shares, kept in Redis and filled in at start
(`secret_from_redis`, see `store.shared_secret`); else `<data_dir>/secret`,
generated once (mode 0600). `KLONDIKE_OLD_SECRETS` adds older secrets that verify
tokens but never sign (key rotation, docs/operations.md).

This module must never touch the network, start anything, or put a secret into a
message, a repr or a log line. Apart from the secret file it has no side effects.
"""

from __future__ import annotations

import contextlib
import difflib
import ipaddress
import logging
import math
import os
import re
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Final, Self, TypeAlias

import platformdirs

from klondike_live.auth import KeyRing
from klondike_live.engine import NotationError, Variant
from klondike_live.errors import LiveError

__all__ = [
    "DEFAULT_POOL_VARIANTS",
    "DEFAULT_TRUSTED_PROXIES",
    "ENV_PREFIX",
    "FLAGS",
    "LOOPS",
    "MIN_SECRET_BYTES",
    "ConfigError",
    "Settings",
    "env_name",
    "log_options",
    "redact_url",
    "unknown_variables",
]

log = logging.getLogger(__name__)

ENV_PREFIX = "KLONDIKE_"
MIN_SECRET_BYTES = 32
SECRET_FILE = "secret"
SECRET_FILE_ENV: Final = "KLONDIKE_SECRET_FILE"
OLD_SECRETS_ENV: Final = "KLONDIKE_OLD_SECRETS"
LOG_LEVEL_ENV: Final = "KLONDIKE_LOG_LEVEL"
LOG_FORMAT_ENV: Final = "KLONDIKE_LOG_FORMAT"
LOG_LEVELS: Final = ("debug", "info", "warning", "error", "critical")
LOG_FORMATS: Final = ("text", "json")
LOOPS: Final = ("auto", "uvloop", "asyncio")
"""The values of `loop`: `auto` is uvloop where it is installed, else asyncio's own."""

FLAGS: Final[Mapping[str, str]] = {
    "host": "--host",
    "port": "--port",
    "redis_url": "--redis",
    "data_dir": "--data-dir",
    "database_url": "--database",
    "loop": "--loop",
}
"""The `serve` flag of each setting that has one; a bad flag value is reported under it."""

_NOT_SETTINGS: Final = ("KLONDIKE_TEST_", "KLONDIKE_CHROMIUM", "KLONDIKE_SCREENSHOTS")
"""Variables (or prefixes) of the test suite and the tools, which the server ignores."""

RETIRED: Final[Mapping[str, str]] = {
    "KLONDIKE_RESULTS_DAYS": (
        "finished games are kept in the history database (for ever unless purged; "
        "KLONDIKE_RESULTS_CACHE_MINUTES is how long Valkey keeps a copy)"
    ),
}
"""Variables of earlier releases, and what took their place (said once at start)."""

IPNetwork: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_TRUSTED_PROXIES: Final = (
    "127.0.0.0/8,::1/128,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7"
)
"""Loopback and private networks: where a load balancer in front of the nodes lives."""
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_DATABASE_SCHEMES = ("sqlite:///", "postgresql://", "postgres://")
HISTORY_FILE: Final = "history.sqlite3"
"""The default history database: this SQLite file in the data directory."""
_NODE_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")


class ConfigError(LiveError, ValueError):
    """A configuration value is missing, malformed or out of range; names the key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


def env_name(name: str) -> str:
    """The environment variable of a settings field: `port` → `KLONDIKE_PORT`."""
    return ENV_PREFIX + name.upper()


@dataclass(frozen=True, slots=True)
class _Range:
    """Bounds of a numeric setting; `low_open` excludes the lower bound itself."""

    kind: type[int] | type[float]
    low: float
    high: float
    low_open: bool = False

    def describe(self) -> str:
        noun = "an integer" if self.kind is int else "a number"
        if self.low_open:
            return f"{noun} > {_fmt(self.low)} and <= {_fmt(self.high)}"
        return f"{noun} {_fmt(self.low)}..{_fmt(self.high)}"

    def contains(self, value: float) -> bool:
        if math.isnan(value):
            return False
        above = value > self.low if self.low_open else value >= self.low
        return above and value <= self.high


def _fmt(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


# The numeric settings and their allowed ranges (port 0 means "any free port").
_RANGES: dict[str, _Range] = {
    "port": _Range(int, 0, 65535),
    "max_frame_bytes": _Range(int, 256, 16 * 1024 * 1024),
    "rate_per_second": _Range(float, 0, 10_000, low_open=True),
    "rate_burst": _Range(int, 1, 100_000),
    "abuse_limit": _Range(int, 1, 10_000),
    "abuse_window_seconds": _Range(float, 0, 3600, low_open=True),
    "grace_seconds": _Range(float, 0, 86_400),
    "countdown_seconds": _Range(float, 0, 60),
    "match_interval_seconds": _Range(float, 0, 600),
    "stream_maxlen": _Range(int, 10, 10_000_000),
    "tick_seconds": _Range(float, 0, 10, low_open=True),
    "pool_target": _Range(int, 0, 100_000),
    "pool_budget_seconds": _Range(float, 0, 3600, low_open=True),
    "pool_budget_nodes": _Range(int, 1, 10**9),
    "daily_budget_seconds": _Range(float, 0, 86_400, low_open=True),
    "daily_budget_nodes": _Range(int, 1, 10**10),
    "daily_days_ahead": _Range(int, 0, 366),
    "daily_prepare_seconds": _Range(float, 0, 86_400),
    "daily_time_limit_seconds": _Range(int, 1, 86_400),
    "results_cache_minutes": _Range(float, 0, 43_200, low_open=True),
    "analysis_seconds": _Range(float, 0, 3600),
    "unfinished_days": _Range(int, 1, 36_500),
    "lobby_hours": _Range(float, 0, 8_760, low_open=True),
    "wait_replicas": _Range(int, -1, 16),
    "wait_timeout_ms": _Range(int, 1, 60_000),
    "max_connections_per_user": _Range(int, 0, 100_000),
    "max_connections_per_address": _Range(int, 0, 1_000_000),
    "session_days": _Range(int, 1, 3650),
    "sign_in_per_account": _Range(int, 1, 1_000_000),
    "sign_in_per_address": _Range(int, 1, 1_000_000),
    "sign_in_window_seconds": _Range(float, 0, 86_400, low_open=True),
    "gc_freeze_seconds": _Range(float, 0, 3600),
    "gc_sweep_seconds": _Range(float, 0, 7 * 86_400),
    "bot_workers": _Range(int, 1, 64),
    "bot_max": _Range(int, 0, 100_000),
    "quick_fill_seconds": _Range(float, 0, 60),
    "quick_alone_seconds": _Range(float, 0, 3600),
    "quick_lease_seconds": _Range(float, 1, 600),
    "quick_tick_seconds": _Range(float, 0, 10, low_open=True),
    "challenge_seconds": _Range(float, 1, 3600),
    "presence_seconds": _Range(float, 0, 600, low_open=True),
    "bot_pace_scale": _Range(float, 0, 100, low_open=True),
    "bot_moves_per_second": _Range(float, 0, 100_000, low_open=True),
}

DEFAULT_POOL_VARIANTS: tuple[Variant, ...] = (
    Variant(draw=1, passes=1),
    Variant(draw=3, passes=3),
    Variant(draw=1, passes=0),
    Variant(draw=3, passes=0),
)
"""The variants of the home page, whose certified deals the pool keeps ready."""


def _default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("klondike-live"))


def _new_node_id() -> str:
    return secrets.token_hex(4)


def parse_networks(key: str, raw: str) -> tuple[IPNetwork, ...]:
    """Comma-separated addresses or CIDR networks (`10.0.0.0/8, ::1`); empty: none."""
    out: list[IPNetwork] = []
    for item in raw.split(","):
        if not item.strip():
            continue
        try:
            out.append(ipaddress.ip_network(item.strip(), strict=False))
        except ValueError:
            raise ConfigError(
                key, f"expected comma-separated addresses or networks (CIDR), got {raw!r}"
            ) from None
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the server is configured with; build it with `Settings.load()`.

    Construction checks every value (also through `dataclasses.replace`), so an
    instance is always valid. The secrets and `redis_url` (which may hold a password)
    are left out of the repr. With `secret_from_redis`, `secret` is empty until the
    node fills in the shared one at start; `keys` refuses to hand out an empty key.
    """

    secret: bytes = field(repr=False)
    old_secrets: tuple[bytes, ...] = field(default=(), repr=False)
    secret_from_redis: bool = False
    data_dir: Path = field(default_factory=_default_data_dir)
    host: str = "127.0.0.1"
    port: int = 8765
    redis_url: str | None = field(default=None, repr=False)
    database_url: str | None = field(default=None, repr=False)
    """The history database (`sqlite:///PATH` or `postgresql://...`); None: the SQLite
    file `history.sqlite3` in `data_dir` (`history_url`)."""
    max_frame_bytes: int = 4096
    rate_per_second: float = 20.0
    rate_burst: int = 40
    abuse_limit: int = 10
    abuse_window_seconds: float = 10.0
    grace_seconds: float = 60.0
    countdown_seconds: float = 3.0
    match_interval_seconds: float = 6.0
    """Seconds between the end of a match's deal and the next deal (its countdown
    follows)."""
    stream_maxlen: int = 1000
    tick_seconds: float = 0.2
    node_id: str = field(default_factory=_new_node_id)
    pool_variants: tuple[Variant, ...] = DEFAULT_POOL_VARIANTS
    pool_target: int = 20
    pool_budget_seconds: float = 5.0
    pool_budget_nodes: int = 300_000
    daily_budget_seconds: float = 120.0
    daily_budget_nodes: int = 2_000_000
    daily_days_ahead: int = 7
    daily_prepare_seconds: float = 3600.0
    daily_time_limit_seconds: int = 1800
    results_cache_minutes: float = 60.0
    """Minutes a finished game's results stay in Valkey once the history database has
    them (resumes, replays and analyses of just-finished games read them there)."""
    analysis_seconds: float = 20.0
    """CPU seconds of solver analysis per board of a finished game (at most 1 s per
    position); 0: games are not analysed and `/api/analysis` answers 404."""
    unfinished_days: int = 30
    """Days a practice game left unfinished (its clock stopped) is kept for its player."""
    lobby_hours: float = 24.0
    """Hours a lobby nobody changes (no join, leave, ready, ...) is kept; then it is gone
    and out of the public list."""
    wait_replicas: int = -1
    """Replicas a board write waits for (WAIT) before the move is acknowledged; -1: one
    wherever the write's master has one in sync (checked per master, again as replicas
    come and go), else none."""
    wait_timeout_ms: int = 1000
    max_connections_per_user: int = 20
    max_connections_per_address: int = 200
    session_days: int = 90
    """Days an account's session (a signed-in device) lasts unless signed out."""
    sign_in_per_account: int = 10
    """Failed sign-ins of one username (whether it exists or not) in a window, after
    which its password sign-ins are refused (`rate_limited`) until the window ends."""
    sign_in_per_address: int = 30
    """Failed sign-ins and account creations of one address in a window, after which
    its account requests are refused until the window ends."""
    sign_in_window_seconds: float = 300.0
    """The window of the sign-in limits, from an address's or username's first failure."""
    rp_id: str = ""
    """The WebAuthn relying party id passkeys are bound to: a host name, the site's or
    a parent domain of it; empty: the host each page was served from (its `Host`)."""
    gc_freeze_seconds: float = 10.0
    """How often the collector's heap is frozen (see `gcpolicy`); 0: CPython's default
    collection."""
    gc_sweep_seconds: float = 21_600.0
    """How often the frozen heap is swept by one full collection; 0: never."""
    bot_workers: int = 1
    """Processes that think for this node's in-server bots (run at a lower CPU priority)."""
    bot_max: int = 200
    """In-server bots this node runs at once; `add_bot` beyond it is refused (`busy`)."""
    bot_pace_scale: float = 1.0
    """Multiplies every bot's drawn think time (tests make bots quick)."""
    bot_moves_per_second: float = 50.0
    """Moves per second all of this node's bots may make together while the event loop
    keeps up; the rate shrinks as the loop lags (docs/operations.md, "Bots")."""
    quick_fill_seconds: float = 4.0
    """Once a second player waits in a quick race queue, how long more may join before
    the race is made (at once when the variant's seats are all taken)."""
    quick_alone_seconds: float = 20.0
    """How long a player waits alone in a quick race queue before it is offered a race
    against the machine."""
    quick_lease_seconds: float = 10.0
    """How long a quick race queue entry lives unless its node renews it (a dead node's
    entries expire after this)."""
    quick_tick_seconds: float = 0.5
    """How often each node makes the quick races that are due and renews its entries."""
    challenge_seconds: float = 60.0
    """How long a challenge to a friend waits for its answer (then it is gone)."""
    presence_seconds: float = 10.0
    """How often a node renews its players' presence (what each is doing); a presence
    lives three times this unless renewed."""
    loop: str = "auto"
    """The event loop the node runs on (`eventloop`): `uvloop`, `asyncio` (the standard
    library's), or `auto`: uvloop where it is installed, else asyncio's with a log line."""
    trusted_proxies: tuple[IPNetwork, ...] = parse_networks(
        "KLONDIKE_TRUSTED_PROXIES", DEFAULT_TRUSTED_PROXIES
    )
    flags: frozenset[str] = frozenset()
    """The settings given as command-line flags (errors name the flag, see `source`)."""

    def __post_init__(self) -> None:
        for name, bounds in _RANGES.items():
            value = getattr(self, name)
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if bounds.kind is int:
                ok = ok and isinstance(value, int)
            if not ok or not bounds.contains(value):
                raise ConfigError(env_name(name), f"expected {bounds.describe()}, got {value!r}")
        if not isinstance(self.host, str) or not self.host or any(c.isspace() for c in self.host):
            raise ConfigError(
                env_name("host"), f"expected a host name or address, got {self.host!r}"
            )
        if self.redis_url is not None and not self.redis_url.startswith(_REDIS_SCHEMES):
            raise ConfigError(
                env_name("redis_url"),
                "expected a URL starting with redis://, rediss:// or unix://, "
                f"got {redact_url(self.redis_url)!r}",
            )
        if self.database_url is not None and not self.database_url.startswith(_DATABASE_SCHEMES):
            raise ConfigError(
                env_name("database_url"),
                "expected a URL starting with sqlite:/// or postgresql://, "
                f"got {redact_url(self.database_url)!r}",
            )
        if not isinstance(self.rp_id, str) or any(c.isspace() or c in "/:@" for c in self.rp_id):
            raise ConfigError(env_name("rp_id"), f"expected a host name, got {self.rp_id!r}")
        if self.loop not in LOOPS:
            raise ConfigError(
                env_name("loop"), f"expected one of {', '.join(LOOPS)}, got {self.loop!r}"
            )
        if not isinstance(self.data_dir, Path):
            raise ConfigError(env_name("data_dir"), f"expected a path, got {self.data_dir!r}")
        self._check_secrets()
        if not isinstance(self.node_id, str) or not _NODE_ID.fullmatch(self.node_id):
            raise ConfigError(
                env_name("node_id"),
                f"expected 1..32 characters from A-Z a-z 0-9 _ -, got {self.node_id!r}",
            )
        if not isinstance(self.pool_variants, tuple) or not all(
            isinstance(v, Variant) for v in self.pool_variants
        ):
            raise ConfigError(
                env_name("pool_variants"), f"expected variants, got {self.pool_variants!r}"
            )
        if not isinstance(self.trusted_proxies, tuple) or not all(
            isinstance(n, ipaddress.IPv4Network | ipaddress.IPv6Network)
            for n in self.trusted_proxies
        ):
            raise ConfigError(
                env_name("trusted_proxies"), f"expected networks, got {self.trusted_proxies!r}"
            )

    def _check_secrets(self) -> None:
        # Never echo a secret itself, only its length.
        pending = self.secret_from_redis and self.secret == b""
        if not pending and (
            not isinstance(self.secret, bytes) or len(self.secret) < MIN_SECRET_BYTES
        ):
            size = len(self.secret) if isinstance(self.secret, bytes | str) else 0
            raise ConfigError(
                env_name("secret"), f"expected at least {MIN_SECRET_BYTES} bytes, got {size}"
            )
        if self.secret_from_redis and self.redis_url is None:
            raise ConfigError(
                env_name("secret"), "only a node on a shared Redis takes its secret from Redis"
            )
        if not isinstance(self.old_secrets, tuple):
            raise ConfigError(OLD_SECRETS_ENV, "expected a tuple of secrets")
        for number, old in enumerate(self.old_secrets, 1):
            if not isinstance(old, bytes) or len(old) < MIN_SECRET_BYTES:
                size = len(old) if isinstance(old, bytes | str) else 0
                raise ConfigError(
                    OLD_SECRETS_ENV,
                    f"secret {number}: expected at least {MIN_SECRET_BYTES} bytes, got {size}",
                )

    @property
    def embedded(self) -> bool:
        """True when no Redis URL is configured and the server runs its own Valkey."""
        return self.redis_url is None

    @property
    def history_url(self) -> str:
        """The history database's URL: `database_url`, else SQLite in `data_dir`."""
        if self.database_url is not None:
            return self.database_url
        return f"sqlite:///{self.data_dir / HISTORY_FILE}"

    @property
    def keys(self) -> KeyRing:
        """The token keys: `secret` signs, it and `old_secrets` verify."""
        if not self.secret:
            raise RuntimeError("the shared secret is read from Redis when the node starts")
        return KeyRing(self.secret, self.old_secrets)

    def source(self, name: str) -> str:
        """Where the setting `name` is configured: its flag if one was given, else its
        environment variable (what an error about its value should name)."""
        return FLAGS[name] if name in self.flags and name in FLAGS else env_name(name)

    @classmethod
    def load(
        cls,
        *,
        host: str | None = None,
        port: int | str | None = None,
        redis_url: str | None = None,
        data_dir: str | Path | None = None,
        database_url: str | None = None,
        loop: str | None = None,
        environ: Mapping[str, str] = os.environ,
        secret_from_redis: bool = False,
        from_flags: bool = False,
        need_secret: bool = True,
    ) -> Self:
        """Read the settings once: explicit arguments, then `KLONDIKE_*`, then defaults.

        With `from_flags` the explicit arguments are command-line flags (`FLAGS`): a bad
        one is reported under the flag's name, and `source` names it; otherwise every
        error names the setting's variable. The secret comes
        from `KLONDIKE_SECRET` or `KLONDIKE_SECRET_FILE`; without either, a node on a
        shared Redis called with `secret_from_redis` leaves it to be filled in from
        Redis at start, and any other reads or creates `<data_dir>/secret`. A command
        that signs nothing (`need_secret=False`, e.g. `klondike-live db`) reads no secret
        and writes no file: its settings hold a random one, used by nothing.
        Raises `ConfigError` naming the first bad key.
        """
        explicit = (
            ("host", host),
            ("port", port),
            ("redis_url", redis_url),
            ("data_dir", data_dir),
            ("database_url", database_url),
            ("loop", loop),
        )
        given = {name for name, value in explicit if value is not None} if from_flags else set()
        try:
            values = _read(host, port, redis_url, data_dir, environ, secret_from_redis, need_secret)
            database = database_url or environ.get(env_name("database_url"), "")
            if database.strip():
                values["database_url"] = database.strip()
            chosen_loop = loop if loop is not None else environ.get(env_name("loop"))
            if chosen_loop is not None:
                values["loop"] = chosen_loop.strip().lower()
            return cls(**values, flags=frozenset(given))
        except ConfigError as exc:
            name = exc.key.removeprefix(ENV_PREFIX).lower()
            if name in given and exc.key == env_name(name):
                raise ConfigError(FLAGS[name], exc.message) from None
            raise

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Every settings key, in declaration order (for docs and error messages)."""
        return tuple(f.name for f in fields(cls))


def _read(
    host: str | None,
    port: int | str | None,
    redis_url: str | None,
    data_dir: str | Path | None,
    environ: Mapping[str, str],
    secret_from_redis: bool,
    need_secret: bool = True,
) -> dict[str, Any]:
    """The values `Settings.load` builds its settings from (see there)."""
    values: dict[str, Any] = {}
    for name in _RANGES:
        raw = environ.get(env_name(name))
        if raw is not None:
            values[name] = _parse_number(name, raw)
    if isinstance(port, str):
        values["port"] = _parse_number("port", port)
    elif port is not None:
        values["port"] = port
    chosen_host = host if host is not None else environ.get(env_name("host"))
    if chosen_host is not None:
        values["host"] = chosen_host.strip()
    url = redis_url if redis_url is not None else environ.get(env_name("redis_url"))
    if url is not None and url.strip():
        values["redis_url"] = url.strip()
    node_id = environ.get(env_name("node_id"))
    if node_id is not None:
        values["node_id"] = node_id.strip()
    pooled = environ.get(env_name("pool_variants"))
    if pooled is not None:
        values["pool_variants"] = parse_variants(env_name("pool_variants"), pooled)
    rp_id = environ.get(env_name("rp_id"))
    if rp_id is not None:
        values["rp_id"] = rp_id.strip().lower()
    proxies = environ.get(env_name("trusted_proxies"))
    if proxies is not None:
        values["trusted_proxies"] = parse_networks(env_name("trusted_proxies"), proxies)

    raw_dir = data_dir if data_dir is not None else environ.get(env_name("data_dir"))
    if raw_dir is not None and not str(raw_dir).strip():
        raise ConfigError(env_name("data_dir"), "expected a directory path, got ''")
    directory = Path(raw_dir).expanduser() if raw_dir is not None else _default_data_dir()
    values["data_dir"] = directory

    secret, older = _read_secrets(environ) if need_secret else (new_secret(), [])
    if secret is not None:
        values["secret"] = secret
    elif "redis_url" in values and secret_from_redis:
        values["secret"] = b""
        values["secret_from_redis"] = True
    else:
        values["secret"] = load_or_create_secret(directory)
    values["old_secrets"] = tuple(dict.fromkeys(s for s in older if s != values["secret"]))
    return values


def _read_secrets(environ: Mapping[str, str]) -> tuple[bytes | None, list[bytes]]:
    """The configured secret (None: not configured) and the older ones to accept."""
    env_secret = environ.get(env_name("secret"))
    secret_file = environ.get(SECRET_FILE_ENV)
    if env_secret is not None and secret_file is not None:
        raise ConfigError(
            SECRET_FILE_ENV, f"set either {env_name('secret')} or {SECRET_FILE_ENV}, not both"
        )
    secret: bytes | None = None
    older: list[bytes] = []
    if env_secret is not None:
        secret = env_secret.strip().encode("utf-8")
    elif secret_file is not None:
        secret, older = read_secret_file(secret_file)
    old_text = environ.get(OLD_SECRETS_ENV, "")
    older += [item.strip().encode("utf-8") for item in old_text.split(",") if item.strip()]
    return secret, older


def read_secret_file(name: str) -> tuple[bytes, list[bytes]]:
    """`KLONDIKE_SECRET_FILE`: the secret on its first line, older ones accepted for
    verifying on the next lines (blank lines and `#` comments are skipped)."""
    if not name.strip():
        raise ConfigError(SECRET_FILE_ENV, "expected a file path, got ''")
    path = Path(name.strip()).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ConfigError(SECRET_FILE_ENV, f"cannot read {path}: {reason}") from None
    lines = [
        (number, line.strip())
        for number, line in enumerate(text.splitlines(), 1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines:
        raise ConfigError(SECRET_FILE_ENV, f"{path} holds no secret")
    for number, line in lines:
        size = len(line.encode("utf-8"))
        if size < MIN_SECRET_BYTES:
            raise ConfigError(
                SECRET_FILE_ENV,
                f"{path} line {number} holds {size} bytes, expected at least {MIN_SECRET_BYTES}",
            )
    secrets_in_file = [line.encode("utf-8") for _, line in lines]
    return secrets_in_file[0], secrets_in_file[1:]


def env_variables() -> frozenset[str]:
    """Every `KLONDIKE_*` variable the server reads."""
    internal = {"secret_from_redis", "flags"}
    names = {env_name(f) for f in Settings.field_names() if f not in internal}
    return frozenset(names | {SECRET_FILE_ENV, LOG_LEVEL_ENV, LOG_FORMAT_ENV})


def unknown_variables(environ: Mapping[str, str] = os.environ) -> Iterator[str]:
    """One warning line per `KLONDIKE_*` variable that is no setting (a misspelling),
    suggesting the closest known name."""
    known = env_variables()
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX) or name in known or name.startswith(_NOT_SETTINGS):
            continue
        # Compared without the prefix, which every name shares.
        suffixes = {k.removeprefix(ENV_PREFIX): k for k in known}
        if name in RETIRED:
            yield f"{name} is no longer a setting and is ignored: {RETIRED[name]}"
            continue
        close = difflib.get_close_matches(name.removeprefix(ENV_PREFIX), suffixes, n=1)
        hint = f"; did you mean {suffixes[close[0]]}?" if close else ""
        yield f"{name} is not a setting and is ignored{hint}"


def log_options(
    *, level: str | None = None, fmt: str | None = None, environ: Mapping[str, str] = os.environ
) -> tuple[str, str]:
    """The log level (`INFO`...) and format (`text` or `json`): `--log-level` and
    `--log-format`, else `KLONDIKE_LOG_LEVEL` and `KLONDIKE_LOG_FORMAT`, else info and
    text. Raises `ConfigError` naming the flag or the variable."""
    chosen: list[str] = []
    for value, flag, variable, allowed, default in (
        (level, "--log-level", LOG_LEVEL_ENV, LOG_LEVELS, "info"),
        (fmt, "--log-format", LOG_FORMAT_ENV, LOG_FORMATS, "text"),
    ):
        key, raw = (flag, value) if value is not None else (variable, environ.get(variable))
        text = default if raw is None else raw.strip().lower()
        if text not in allowed:
            raise ConfigError(key, f"expected one of {', '.join(allowed)}, got {raw!r}")
        chosen.append(text)
    return chosen[0].upper(), chosen[1]


def _parse_number(name: str, raw: str) -> int | float:
    bounds = _RANGES[name]
    text = raw.strip()
    try:
        value: int | float = int(text) if bounds.kind is int else float(text)
    except ValueError:
        raise ConfigError(env_name(name), f"expected {bounds.describe()}, got {raw!r}") from None
    if math.isinf(value) or not bounds.contains(value):
        raise ConfigError(env_name(name), f"expected {bounds.describe()}, got {raw!r}")
    return value


def parse_variants(key: str, raw: str) -> tuple[Variant, ...]:
    """Comma-separated variant texts (`draw=1 passes=1 f2t=no, draw=3`), in order, each
    once; an empty text is no variant at all."""
    out: list[Variant] = []
    for item in raw.split(","):
        if not item.strip():
            continue
        try:
            variant = Variant.parse(item.strip())
        except NotationError as exc:
            raise ConfigError(
                key, f"expected comma-separated variants, got {raw!r} ({exc})"
            ) from None
        if variant not in out:
            out.append(variant)
    return tuple(out)


def redact_url(url: str) -> str:
    """A Redis URL with any password replaced by `***`, fit for messages and logs."""
    url = re.sub(r"^([A-Za-z0-9+.-]+://[^:/@?#]*:)[^@]*@", r"\1***@", url)
    return re.sub(r"([?&]password=)[^&#]*", r"\1***", url)


def load_or_create_secret(data_dir: Path) -> bytes:
    """The secret kept in `<data_dir>/secret`, created once (mode 0600) if missing.

    The file holds 64 hex characters (32 random bytes); the secret is that text as
    bytes, exactly what `KLONDIKE_SECRET=$(cat <data_dir>/secret)` gives other nodes.
    Creation is atomic, so two processes starting at once end up with one secret.
    """
    path = data_dir / SECRET_FILE
    key = env_name("secret")
    if not path.exists():
        try:
            data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            _create_secret_file(path)
        except OSError as exc:
            raise ConfigError(key, f"cannot create {path}: {exc.strerror}") from None
    try:
        text = path.read_text(encoding="ascii").strip()
        mode = path.stat().st_mode & 0o777
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not ASCII text"
        raise ConfigError(key, f"cannot read {path}: {reason}") from None
    if len(text) < MIN_SECRET_BYTES:
        raise ConfigError(
            key, f"{path} holds {len(text)} characters, expected at least {MIN_SECRET_BYTES}"
        )
    if mode & 0o077:
        log.warning("secret file %s is readable by others (mode %o); use chmod 600", path, mode)
    return text.encode("ascii")


def new_secret() -> bytes:
    """A fresh secret: 64 hex characters (32 random bytes), as the text's bytes."""
    return secrets.token_bytes(32).hex().encode("ascii")


def offered_shared_secret(data_dir: Path) -> bytes:
    """The secret a node offers when Redis holds no shared secret yet: its data
    directory's secret file if it has one (so a single node that moves to a shared
    Redis keeps its players signed in), else a fresh one. Creates no file."""
    if (data_dir / SECRET_FILE).exists():
        return load_or_create_secret(data_dir)
    return new_secret()


def _create_secret_file(path: Path) -> None:
    """Write a fresh secret to a private temp file, then link it into place.

    `os.link` never replaces an existing file, so the first process to link wins.
    """
    tmp = path.with_name(f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(new_secret().decode("ascii") + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        # A concurrent start linked its secret first: keep that one.
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
