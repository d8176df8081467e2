"""Settings: precedence of flags over environment over defaults, loud errors, the secret file."""

from __future__ import annotations

import dataclasses
import stat
from pathlib import Path

import platformdirs
import pytest

from klondike_live.config import (
    ConfigError,
    Settings,
    env_name,
    log_options,
    redact_url,
    unknown_variables,
)

SECRET = "s" * 40


def load(tmp_path: Path, **env: str) -> Settings:
    return Settings.load(data_dir=tmp_path, environ={"KLONDIKE_SECRET": SECRET, **env})


def test_defaults_run_on_one_machine(tmp_path: Path) -> None:
    """With nothing configured: loopback, port 8765, embedded Valkey, documented tunables."""
    settings = load(tmp_path)
    assert (settings.host, settings.port, settings.redis_url) == ("127.0.0.1", 8765, None)
    assert settings.embedded
    assert settings.max_frame_bytes == 4096
    assert (settings.rate_per_second, settings.rate_burst) == (20, 40)
    assert (settings.abuse_limit, settings.abuse_window_seconds) == (10, 10)
    assert (settings.grace_seconds, settings.countdown_seconds) == (60, 3.0)
    assert (settings.stream_maxlen, settings.tick_seconds) == (1000, 0.2)


def test_default_data_dir_is_platform_user_data_dir() -> None:
    """Without --data-dir or KLONDIKE_DATA_DIR the data dir is the platform's user data dir."""
    settings = Settings.load(environ={"KLONDIKE_SECRET": SECRET})
    assert settings.data_dir == Path(platformdirs.user_data_dir("klondike-live"))


def test_environment_beats_defaults(tmp_path: Path) -> None:
    """Every KLONDIKE_<NAME> variable is read and cast to the field's type."""
    settings = load(
        tmp_path,
        KLONDIKE_HOST="0.0.0.0",
        KLONDIKE_PORT="9000",
        KLONDIKE_REDIS_URL="redis://cache:6379/2",
        KLONDIKE_MAX_FRAME_BYTES="8192",
        KLONDIKE_RATE_PER_SECOND="5.5",
        KLONDIKE_RATE_BURST="11",
        KLONDIKE_ABUSE_LIMIT="3",
        KLONDIKE_ABUSE_WINDOW_SECONDS="2",
        KLONDIKE_GRACE_SECONDS="0",
        KLONDIKE_COUNTDOWN_SECONDS="1.5",
        KLONDIKE_STREAM_MAXLEN="50",
        KLONDIKE_TICK_SECONDS="0.05",
        KLONDIKE_NODE_ID="node-a",
    )
    assert (settings.host, settings.port, settings.redis_url) == (
        "0.0.0.0",
        9000,
        "redis://cache:6379/2",
    )
    assert not settings.embedded
    assert settings.max_frame_bytes == 8192 and settings.rate_per_second == 5.5
    assert (settings.rate_burst, settings.abuse_limit, settings.abuse_window_seconds) == (11, 3, 2)
    assert (settings.grace_seconds, settings.countdown_seconds) == (0, 1.5)
    assert (settings.stream_maxlen, settings.tick_seconds, settings.node_id) == (50, 0.05, "node-a")


def test_explicit_values_beat_environment(tmp_path: Path) -> None:
    """Command-line values win over KLONDIKE_HOST, _PORT, _REDIS_URL and _DATA_DIR."""
    env = {
        "KLONDIKE_SECRET": SECRET,
        "KLONDIKE_HOST": "10.0.0.1",
        "KLONDIKE_PORT": "9000",
        "KLONDIKE_REDIS_URL": "redis://env:6379",
        "KLONDIKE_DATA_DIR": str(tmp_path / "from-env"),
    }
    settings = Settings.load(
        host="127.0.0.2",
        port=9100,
        redis_url="redis://flag:6379",
        data_dir=tmp_path / "from-flag",
        environ=env,
    )
    assert (settings.host, settings.port) == ("127.0.0.2", 9100)
    assert settings.redis_url == "redis://flag:6379"
    assert settings.data_dir == tmp_path / "from-flag"
    assert Settings.load(environ=env).data_dir == tmp_path / "from-env"


@pytest.mark.parametrize(
    ("key", "raw", "expected"),
    [
        ("KLONDIKE_PORT", "abc", "KLONDIKE_PORT: expected an integer 0..65535, got 'abc'"),
        ("KLONDIKE_PORT", "70000", "KLONDIKE_PORT: expected an integer 0..65535, got '70000'"),
        ("KLONDIKE_MAX_FRAME_BYTES", "1.5", "KLONDIKE_MAX_FRAME_BYTES: expected an integer"),
        ("KLONDIKE_RATE_PER_SECOND", "0", "KLONDIKE_RATE_PER_SECOND: expected a number > 0"),
        ("KLONDIKE_TICK_SECONDS", "nan", "KLONDIKE_TICK_SECONDS: expected a number > 0"),
        ("KLONDIKE_GRACE_SECONDS", "inf", "KLONDIKE_GRACE_SECONDS: expected a number 0..86400"),
        ("KLONDIKE_GRACE_SECONDS", "-1", "KLONDIKE_GRACE_SECONDS: expected a number 0..86400"),
        ("KLONDIKE_STREAM_MAXLEN", "", "KLONDIKE_STREAM_MAXLEN: expected an integer"),
        ("KLONDIKE_REDIS_URL", "http://x", "KLONDIKE_REDIS_URL: expected a URL starting with"),
        ("KLONDIKE_NODE_ID", "a b", "KLONDIKE_NODE_ID: expected 1..32 characters"),
        ("KLONDIKE_HOST", "", "KLONDIKE_HOST: expected a host name or address, got ''"),
        ("KLONDIKE_POOL_TARGET", "-1", "KLONDIKE_POOL_TARGET: expected an integer 0..100000"),
        ("KLONDIKE_POOL_VARIANTS", "draw=2", "KLONDIKE_POOL_VARIANTS: expected comma-separated"),
        ("KLONDIKE_DAILY_TIME_LIMIT_SECONDS", "0", "KLONDIKE_DAILY_TIME_LIMIT_SECONDS: expected"),
        ("KLONDIKE_DAILY_BUDGET_NODES", "0", "KLONDIKE_DAILY_BUDGET_NODES: expected an integer"),
        (
            "KLONDIKE_RESULTS_CACHE_MINUTES",
            "0",
            "KLONDIKE_RESULTS_CACHE_MINUTES: expected a number > 0 and <= 43200",
        ),
        (
            "KLONDIKE_DATABASE_URL",
            "mysql://db/history",
            "KLONDIKE_DATABASE_URL: expected a URL starting with sqlite:/// or postgresql://",
        ),
    ],
)
def test_bad_values_fail_naming_key_and_value(
    tmp_path: Path, key: str, raw: str, expected: str
) -> None:
    """A bad value raises ConfigError whose message names the variable and the value."""
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, **{key: raw})
    assert str(caught.value).startswith(expected)
    assert caught.value.key == key


def test_pool_and_daily_settings(tmp_path: Path) -> None:
    """The pool keeps the four home-page variants by default; the list, targets, budgets
    and the daily settings come from the environment."""
    defaults = load(tmp_path)
    assert [str(v) for v in defaults.pool_variants] == [
        "draw=1 passes=1 f2t=no",
        "draw=3 passes=3 f2t=no",
        "draw=1 passes=unlimited f2t=no",
        "draw=3 passes=unlimited f2t=no",
    ]
    assert (defaults.pool_target, defaults.pool_budget_nodes) == (20, 300_000)
    assert (defaults.daily_budget_nodes, defaults.daily_days_ahead) == (2_000_000, 7)
    assert (defaults.daily_prepare_seconds, defaults.daily_time_limit_seconds) == (3600, 1800)
    settings = load(
        tmp_path,
        KLONDIKE_POOL_VARIANTS="draw=3, draw=1 passes=unlimited,draw=3 passes=3 f2t=no",
        KLONDIKE_POOL_TARGET="0",
        KLONDIKE_DAILY_PREPARE_SECONDS="0",
        KLONDIKE_DAILY_TIME_LIMIT_SECONDS="600",
    )
    assert [str(v) for v in settings.pool_variants] == [
        "draw=3 passes=3 f2t=no",
        "draw=1 passes=unlimited f2t=no",
    ]
    assert settings.pool_target == 0 and settings.daily_prepare_seconds == 0
    assert settings.daily_time_limit_seconds == 600
    assert load(tmp_path, KLONDIKE_POOL_VARIANTS="").pool_variants == ()


def test_results_cache_default_and_environment(tmp_path: Path) -> None:
    """Valkey keeps a drained game's results 60 minutes by default; the retired
    KLONDIKE_RESULTS_DAYS is named as such at start."""
    assert load(tmp_path).results_cache_minutes == 60
    assert load(tmp_path, KLONDIKE_RESULTS_CACHE_MINUTES="5").results_cache_minutes == 5
    (line,) = unknown_variables({"KLONDIKE_RESULTS_DAYS": "90"})
    assert line.startswith("KLONDIKE_RESULTS_DAYS is no longer a setting and is ignored:")


def test_the_history_database_defaults_to_sqlite_in_the_data_dir(tmp_path: Path) -> None:
    """No database configured: history.sqlite3 in the data dir; --database (or
    KLONDIKE_DATABASE_URL) names another, and an error about it names the flag."""
    assert load(tmp_path).history_url == f"sqlite:///{tmp_path / 'history.sqlite3'}"
    url = "postgresql://klondike:pw@db.internal/history"
    assert load(tmp_path, KLONDIKE_DATABASE_URL=url).history_url == url
    env = {"KLONDIKE_SECRET": SECRET}
    flagged = Settings.load(data_dir=tmp_path, database_url=url, environ=env, from_flags=True)
    assert flagged.history_url == url and "pw" not in repr(flagged)
    with pytest.raises(ConfigError, match=r"^--database: expected a URL starting with"):
        Settings.load(data_dir=tmp_path, database_url="x", environ=env, from_flags=True)


def test_bad_explicit_port_fails_naming_the_flag(tmp_path: Path) -> None:
    """An out-of-range --port is refused like an environment value, under the flag's name."""
    env = {"KLONDIKE_SECRET": SECRET}
    with pytest.raises(ConfigError, match=r"^--port: expected an integer 0\.\.65535, got -1"):
        Settings.load(port=-1, data_dir=tmp_path, environ=env, from_flags=True)
    with pytest.raises(ConfigError, match=r"^KLONDIKE_PORT: "):  # not from a flag (a tool)
        Settings.load(port=-1, data_dir=tmp_path, environ=env)


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({"port": "99999"}, "--port: expected an integer 0..65535, got '99999'"),
        ({"port": "abc"}, "--port: expected an integer 0..65535, got 'abc'"),
        ({"host": " "}, "--host: expected a host name or address, got ''"),
        ({"redis_url": "http://x"}, "--redis: expected a URL starting with"),
        ({"data_dir": " "}, "--data-dir: expected a directory path"),
    ],
)
def test_flag_errors_name_the_flag(tmp_path: Path, flags: dict[str, str], expected: str) -> None:
    """A bad flag value is reported under the flag, even when the variable is set too."""
    env = {"KLONDIKE_SECRET": SECRET, "KLONDIKE_PORT": "9000", "KLONDIKE_HOST": "h"}
    with pytest.raises(ConfigError) as caught:
        Settings.load(environ=env, from_flags=True, **{"data_dir": tmp_path, **flags})  # type: ignore[arg-type]
    assert str(caught.value).startswith(expected)


def test_source_names_the_flag_only_when_given(tmp_path: Path) -> None:
    """Settings.source says where a setting came from: the flag if given, else the variable."""
    settings = Settings.load(
        port="9100",
        redis_url="redis://r:6379",
        environ={"KLONDIKE_SECRET": SECRET},
        from_flags=True,
    )
    assert settings.port == 9100
    assert (settings.source("port"), settings.source("redis_url")) == ("--port", "--redis")
    assert settings.source("host") == "KLONDIKE_HOST"
    assert load(tmp_path).source("port") == "KLONDIKE_PORT"


def test_replace_is_checked_too(tmp_path: Path) -> None:
    """dataclasses.replace re-checks values, so no invalid Settings can exist."""
    with pytest.raises(ConfigError, match="KLONDIKE_RATE_BURST"):
        dataclasses.replace(load(tmp_path), rate_burst=0)


def test_short_secret_is_refused_without_echoing_it(tmp_path: Path) -> None:
    """A KLONDIKE_SECRET under 32 bytes fails, and the message never contains it."""
    with pytest.raises(ConfigError) as caught:
        Settings.load(data_dir=tmp_path, environ={"KLONDIKE_SECRET": "tooshort"})
    assert caught.value.key == "KLONDIKE_SECRET"
    assert "tooshort" not in str(caught.value)


def test_secret_and_redis_url_are_not_in_repr(tmp_path: Path) -> None:
    """repr(Settings) shows neither the secret nor a Redis URL that may hold a password."""
    settings = load(tmp_path, KLONDIKE_REDIS_URL="redis://u:hunter2@h:6379")
    assert SECRET not in repr(settings)
    assert "hunter2" not in repr(settings)


def test_env_secret_does_not_touch_data_dir(tmp_path: Path) -> None:
    """With KLONDIKE_SECRET set, no secret file is created."""
    settings = load(tmp_path / "data")
    assert settings.secret == SECRET.encode()
    assert not (tmp_path / "data").exists()


def test_secret_generated_once_private_and_reused(tmp_path: Path) -> None:
    """Without KLONDIKE_SECRET a secret is made once in <data_dir>/secret (0600) and reused."""
    data_dir = tmp_path / "data"
    first = Settings.load(data_dir=data_dir, environ={})
    path = data_dir / "secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first.secret) == 64
    assert first.secret == path.read_text().strip().encode()
    second = Settings.load(data_dir=data_dir, environ={})
    assert second.secret == first.secret
    assert Settings.load(data_dir=tmp_path / "other", environ={}).secret != first.secret


def test_secret_file_text_works_as_env_secret(tmp_path: Path) -> None:
    """The secret file's text used as KLONDIKE_SECRET gives the very same secret bytes."""
    generated = Settings.load(data_dir=tmp_path, environ={})
    text = (tmp_path / "secret").read_text()
    other = Settings.load(data_dir=tmp_path / "other", environ={"KLONDIKE_SECRET": text})
    assert other.secret == generated.secret


def test_truncated_secret_file_is_refused(tmp_path: Path) -> None:
    """A secret file too short to be safe fails loudly instead of signing with it."""
    (tmp_path / "secret").write_text("abc\n")
    with pytest.raises(ConfigError, match=r"KLONDIKE_SECRET: .*holds 3 characters"):
        Settings.load(data_dir=tmp_path, environ={})


def test_node_id_random_per_process_unless_set(tmp_path: Path) -> None:
    """Each load without KLONDIKE_NODE_ID gets a fresh short node id."""
    ids = {load(tmp_path).node_id for _ in range(5)}
    assert len(ids) == 5
    assert all(len(node) == 8 for node in ids)


def test_env_names_follow_field_names() -> None:
    """Every field is configured by KLONDIKE_<UPPER_NAME>."""
    assert env_name("stream_maxlen") == "KLONDIKE_STREAM_MAXLEN"
    assert "tick_seconds" in Settings.field_names()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://h:6379/0", "redis://h:6379/0"),
        ("redis://user:pw@h:6379", "redis://user:***@h:6379"),
        ("redis://:p/w@h:1/0", "redis://:***@h:1/0"),
        ("unix:///run/r.sock?password=pw&db=1", "unix:///run/r.sock?password=***&db=1"),
    ],
)
def test_redact_url_hides_passwords(url: str, shown: str) -> None:
    """redact_url replaces passwords in the authority and in the query string."""
    assert redact_url(url) == shown


def test_caps_defaults_and_environment(tmp_path: Path) -> None:
    """20 connections per account and 200 per address by default; 0 turns a cap off."""
    defaults = load(tmp_path)
    assert (defaults.max_connections_per_user, defaults.max_connections_per_address) == (20, 200)
    settings = load(
        tmp_path, KLONDIKE_MAX_CONNECTIONS_PER_USER="0", KLONDIKE_MAX_CONNECTIONS_PER_ADDRESS="5"
    )
    assert (settings.max_connections_per_user, settings.max_connections_per_address) == (0, 5)
    with pytest.raises(ConfigError, match="KLONDIKE_MAX_CONNECTIONS_PER_USER: expected an int"):
        load(tmp_path, KLONDIKE_MAX_CONNECTIONS_PER_USER="-1")


def test_trusted_proxies_default_to_private_networks(tmp_path: Path) -> None:
    """Loopback and private networks are trusted proxies by default; the list is settable."""
    defaults = {str(n) for n in load(tmp_path).trusted_proxies}
    assert {"127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "::1/128"} <= defaults
    assert load(tmp_path, KLONDIKE_TRUSTED_PROXIES="").trusted_proxies == ()
    chosen = load(tmp_path, KLONDIKE_TRUSTED_PROXIES="10.1.2.3, 2001:db8::/32").trusted_proxies
    assert [str(n) for n in chosen] == ["10.1.2.3/32", "2001:db8::/32"]
    with pytest.raises(ConfigError, match="KLONDIKE_TRUSTED_PROXIES: expected comma-separated"):
        load(tmp_path, KLONDIKE_TRUSTED_PROXIES="10.0.0.0/8, proxy.internal")


# ---------------------------------------------------------------- secrets and rotation

OLD = "o" * 40


def test_secret_file_gives_the_secret_and_older_ones(tmp_path: Path) -> None:
    """KLONDIKE_SECRET_FILE: the first line signs, later lines are accepted older keys."""
    path = tmp_path / "keys"
    path.write_text(f"# rotated 2030-01-01\n{SECRET}\n\n{OLD}\n")
    settings = Settings.load(data_dir=tmp_path / "d", environ={"KLONDIKE_SECRET_FILE": str(path)})
    assert settings.secret == SECRET.encode() and settings.old_secrets == (OLD.encode(),)
    assert not (tmp_path / "d").exists()  # no generated secret file


def test_secret_and_secret_file_are_exclusive(tmp_path: Path) -> None:
    """Setting both KLONDIKE_SECRET and KLONDIKE_SECRET_FILE is refused, naming both."""
    (tmp_path / "keys").write_text(SECRET)
    env = {"KLONDIKE_SECRET": SECRET, "KLONDIKE_SECRET_FILE": str(tmp_path / "keys")}
    with pytest.raises(ConfigError) as caught:
        Settings.load(data_dir=tmp_path, environ=env)
    assert str(caught.value) == (
        "KLONDIKE_SECRET_FILE: set either KLONDIKE_SECRET or KLONDIKE_SECRET_FILE, not both"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, "cannot read"),
        ("", "holds no secret"),
        ("# nothing\n", "holds no secret"),
        (f"{SECRET}\nshort\n", "line 2 holds 5 bytes, expected at least 32"),
    ],
)
def test_bad_secret_file_is_refused(tmp_path: Path, text: str | None, expected: str) -> None:
    """A missing, empty or short secret file fails naming KLONDIKE_SECRET_FILE, not the key."""
    path = tmp_path / "keys"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        Settings.load(data_dir=tmp_path, environ={"KLONDIKE_SECRET_FILE": str(path)})
    assert caught.value.key == "KLONDIKE_SECRET_FILE" and expected in str(caught.value)
    assert SECRET not in str(caught.value)


def test_old_secrets_from_the_environment(tmp_path: Path) -> None:
    """KLONDIKE_OLD_SECRETS: comma-separated older keys; the current one and repeats dropped."""
    settings = load(tmp_path, KLONDIKE_OLD_SECRETS=f"{OLD}, {SECRET},{OLD}")
    assert settings.old_secrets == (OLD.encode(),)
    assert settings.keys.current == SECRET.encode() and settings.keys.older == (OLD.encode(),)
    with pytest.raises(ConfigError, match="KLONDIKE_OLD_SECRETS: secret 1: expected at least 32"):
        load(tmp_path, KLONDIKE_OLD_SECRETS="short")


def test_old_secrets_are_not_in_repr(tmp_path: Path) -> None:
    """repr(Settings) shows no older secret either."""
    assert OLD not in repr(load(tmp_path, KLONDIKE_OLD_SECRETS=OLD))


def test_shared_redis_without_secret_takes_it_from_redis(tmp_path: Path) -> None:
    """With a shared Redis, no secret configured and secret_from_redis (as serve asks), the
    secret is left to be read from Redis: no file is made and the keys are not yet usable."""
    settings = Settings.load(
        redis_url="redis://r:6379", data_dir=tmp_path / "d", environ={}, secret_from_redis=True
    )
    assert settings.secret_from_redis and settings.secret == b""
    assert not (tmp_path / "d").exists()
    with pytest.raises(RuntimeError, match="read from Redis"):
        _ = settings.keys
    embedded = Settings.load(data_dir=tmp_path / "e", environ={}, secret_from_redis=True)
    assert not embedded.secret_from_redis and len(embedded.secret) == 64
    configured = Settings.load(
        redis_url="redis://r:6379", environ={"KLONDIKE_SECRET": SECRET}, secret_from_redis=True
    )
    assert not configured.secret_from_redis and configured.secret == SECRET.encode()


def test_unknown_variables_are_named_with_the_closest_setting() -> None:
    """A misspelt KLONDIKE_* variable gets one warning suggesting the known name; known
    settings and the test suite's own variables get none."""
    environ = {
        "KLONDIKE_PROT": "1",
        "KLONDIKE_SECRETS": "x",
        "KLONDIKE_PORT": "1",
        "KLONDIKE_SECRET_FILE": "f",
        "KLONDIKE_LOG_FORMAT": "json",
        "KLONDIKE_TEST_TIMEOUT_SCALE": "2",
        "KLONDIKE_WHATEVER_ELSE_ENTIRELY": "1",
        "PATH": "/bin",
    }
    assert list(unknown_variables(environ)) == [
        "KLONDIKE_PROT is not a setting and is ignored; did you mean KLONDIKE_PORT?",
        "KLONDIKE_SECRETS is not a setting and is ignored; did you mean KLONDIKE_SECRET?",
        "KLONDIKE_WHATEVER_ELSE_ENTIRELY is not a setting and is ignored",
    ]


def test_log_options_from_flags_then_environment() -> None:
    """--log-level/--log-format beat KLONDIKE_LOG_LEVEL/_FORMAT; defaults info and text;
    a bad value names the flag or the variable that gave it."""
    assert log_options(environ={}) == ("INFO", "text")
    env = {"KLONDIKE_LOG_LEVEL": "warning", "KLONDIKE_LOG_FORMAT": "JSON"}
    assert log_options(environ=env) == ("WARNING", "json")
    assert log_options(level="debug", fmt="text", environ=env) == ("DEBUG", "text")
    with pytest.raises(ConfigError, match=r"^--log-format: expected one of text, json, got 'xml'"):
        log_options(fmt="xml", environ=env)
    with pytest.raises(ConfigError, match=r"^KLONDIKE_LOG_LEVEL: expected one of debug, info"):
        log_options(environ={"KLONDIKE_LOG_LEVEL": "loud"})
