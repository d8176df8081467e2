"""Server settings: read once from command-line values, the environment and defaults.

`Settings.load()` is the only place that reads configuration. Explicit values (the
`serve` command's flags) beat `KLONDIKE_<NAME>` environment variables, which beat the
defaults; the defaults run the whole product on one machine. Every value is cast and
checked here, and a bad one raises `ConfigError` naming the key and the value, so the
rest of the server handles only typed, valid settings.

The secret that signs tokens and derives daily seeds comes from `KLONDIKE_SECRET`, or is
generated once and kept in `<data_dir>/secret` (mode 0600) so tokens survive restarts.
Copying that file's text into `KLONDIKE_SECRET` on other nodes gives them the same secret.

This module must never touch the network, start anything, or put the secret into a
message, a repr or a log line. Apart from the secret file it has no side effects.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Self

import platformdirs

from klondike_live.engine import NotationError, Variant

__all__ = [
    "DEFAULT_POOL_VARIANTS",
    "ENV_PREFIX",
    "MIN_SECRET_BYTES",
    "ConfigError",
    "Settings",
    "env_name",
    "redact_url",
]

log = logging.getLogger(__name__)

ENV_PREFIX = "KLONDIKE_"
MIN_SECRET_BYTES = 32
SECRET_FILE = "secret"
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_NODE_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")


class ConfigError(ValueError):
    """A configuration value is missing, malformed or out of range; names the key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key


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
    "results_days": _Range(int, 0, 36_500),
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


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the server is configured with; build it with `Settings.load()`.

    Construction checks every value (also through `dataclasses.replace`), so an
    instance is always valid. `secret` and `redis_url` (which may hold a password)
    are left out of the repr.
    """

    secret: bytes = field(repr=False)
    data_dir: Path = field(default_factory=_default_data_dir)
    host: str = "127.0.0.1"
    port: int = 8765
    redis_url: str | None = field(default=None, repr=False)
    max_frame_bytes: int = 4096
    rate_per_second: float = 20.0
    rate_burst: int = 40
    abuse_limit: int = 10
    abuse_window_seconds: float = 10.0
    grace_seconds: float = 60.0
    countdown_seconds: float = 3.0
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
    results_days: int = 90

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
        if not isinstance(self.data_dir, Path):
            raise ConfigError(env_name("data_dir"), f"expected a path, got {self.data_dir!r}")
        if not isinstance(self.secret, bytes) or len(self.secret) < MIN_SECRET_BYTES:
            size = len(self.secret) if isinstance(self.secret, bytes | str) else 0
            # Never echo the secret itself, only its length.
            raise ConfigError(
                env_name("secret"), f"expected at least {MIN_SECRET_BYTES} bytes, got {size}"
            )
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

    @property
    def embedded(self) -> bool:
        """True when no Redis URL is configured and the server runs its own Valkey."""
        return self.redis_url is None

    @classmethod
    def load(
        cls,
        *,
        host: str | None = None,
        port: int | None = None,
        redis_url: str | None = None,
        data_dir: str | Path | None = None,
        environ: Mapping[str, str] = os.environ,
    ) -> Self:
        """Read the settings once: explicit arguments, then `KLONDIKE_*`, then defaults.

        Reads or creates `<data_dir>/secret` unless `KLONDIKE_SECRET` is set.
        Raises `ConfigError` naming the first bad key.
        """
        values: dict[str, Any] = {}
        for name in _RANGES:
            raw = environ.get(env_name(name))
            if raw is not None:
                values[name] = _parse_number(name, raw)
        if port is not None:
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

        raw_dir = data_dir if data_dir is not None else environ.get(env_name("data_dir"))
        if raw_dir is not None and not str(raw_dir).strip():
            raise ConfigError(env_name("data_dir"), "expected a directory path, got ''")
        directory = Path(raw_dir).expanduser() if raw_dir is not None else _default_data_dir()
        values["data_dir"] = directory

        env_secret = environ.get(env_name("secret"))
        if env_secret is not None:
            values["secret"] = env_secret.strip().encode("utf-8")
        else:
            values["secret"] = load_or_create_secret(directory)
        return cls(**values)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Every settings key, in declaration order (for docs and error messages)."""
        return tuple(f.name for f in fields(cls))


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


def _create_secret_file(path: Path) -> None:
    """Write a fresh secret to a private temp file, then link it into place.

    `os.link` never replaces an existing file, so the first process to link wins.
    """
    tmp = path.with_name(f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secrets.token_bytes(32).hex() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        # A concurrent start linked its secret first: keep that one.
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
