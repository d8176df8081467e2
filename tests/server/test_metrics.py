"""Prometheus metrics: names, private registries and the exposition text."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from klondike_live.metrics import Metrics


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    body, _ = metrics.render()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }


def test_render_exposes_every_metric_with_prefix() -> None:
    """render() lists all metrics, each named klondike_*, with the Prometheus content type."""
    body, content_type = Metrics().render()
    assert content_type.startswith("text/plain; version=")
    assert content_type.endswith("charset=utf-8")
    families = text_string_to_metric_families(body.decode())
    # prometheus_client also exposes a `<counter>_created` timestamp per counter.
    names = {family.name for family in families if not family.name.endswith("_created")}
    assert names == {
        "klondike_connections",
        "klondike_rooms",
        "klondike_moves",
        "klondike_frames_out",
        "klondike_resyncs",
        "klondike_rate_limit_closes",
        "klondike_errors",
        "klondike_redis_latency_seconds",
    }


def test_counts_and_gauges_show_in_output() -> None:
    """Incremented counters, set gauges and labelled errors appear with their values."""
    metrics = Metrics()
    metrics.connections.inc(3)
    metrics.connections.dec()
    metrics.rooms.set(5)
    metrics.moves.inc(7)
    metrics.frames_out.inc(2)
    metrics.resyncs.inc()
    metrics.rate_limit_closes.inc()
    metrics.error("illegal_move")
    metrics.error("illegal_move")
    metrics.errors.labels(code="bad_frame").inc()
    values = samples(metrics)
    assert values[("klondike_connections", ())] == 2
    assert values[("klondike_rooms", ())] == 5
    assert values[("klondike_moves_total", ())] == 7
    assert values[("klondike_frames_out_total", ())] == 2
    assert values[("klondike_resyncs_total", ())] == 1
    assert values[("klondike_rate_limit_closes_total", ())] == 1
    assert values[("klondike_errors_total", (("code", "illegal_move"),))] == 2
    assert values[("klondike_errors_total", (("code", "bad_frame"),))] == 1


def test_redis_latency_buckets_cover_submillisecond_to_100ms() -> None:
    """A 50 µs and a 30 ms observation land in distinct buckets between 0.1 ms and 100 ms."""
    metrics = Metrics()
    metrics.redis_latency.observe(0.00005)
    metrics.redis_latency.observe(0.03)
    values = samples(metrics)
    bucket = "klondike_redis_latency_seconds_bucket"
    assert values[(bucket, (("le", "0.0001"),))] == 1
    assert values[(bucket, (("le", "0.025"),))] == 1
    assert values[(bucket, (("le", "0.05"),))] == 2
    assert values[(bucket, (("le", "0.1"),))] == 2
    assert values[("klondike_redis_latency_seconds_count", ())] == 2


def test_instances_do_not_share_values() -> None:
    """Each Metrics has its own registry: two servers in one process count separately."""
    first, second = Metrics(), Metrics()
    first.moves.inc(4)
    assert samples(second)[("klondike_moves_total", ())] == 0
    assert samples(first)[("klondike_moves_total", ())] == 4
