"""``ObservationBatch`` and ``observe_all``: a histogram's observations applied in bulk give the
exposition ``Histogram.observe`` gives one value at a time (the same sum, bit for bit, and the
same bucket counts), for labelled and label-less histograms (issue 14: four observations per
placed gang member)."""

from __future__ import annotations

import math
import random

import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from volcano_py.metrics import batch
from volcano_py.metrics.batch import ObservationBatch, observe_all

BOUNDS = (0.5, 1.0, 2.5, 10.0, 100.0)


def _values(seed: int) -> list[float]:
    rng = random.Random(seed)
    values = [rng.choice(BOUNDS) for _ in range(5)]  # exactly on a bound
    values += [rng.uniform(-1.0, 150.0) for _ in range(200)]
    values += [0.1 * i for i in range(30)]  # sums that round
    values += [math.inf, -math.inf, math.nan, 1e308, 1e308]
    rng.shuffle(values)
    return values


def _exposition(values: list[float], bulk: bool, labelled: bool) -> bytes:
    registry = CollectorRegistry()
    labels = ("stage",) if labelled else ()
    histogram = Histogram("h", "test", labels, buckets=BOUNDS, registry=registry)
    child = histogram.labels("x") if labelled else histogram
    if bulk:
        half = len(values) // 2
        kept = ObservationBatch(child)
        for value in values[:half]:
            kept.observe(value)
        kept.flush()
        kept.flush()  # nothing kept: no change
        observe_all(child, values[half:])
    else:
        for value in values:
            child.observe(value)
    return generate_latest(registry)


@pytest.mark.parametrize("labelled", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_bulk_observations_expose_what_one_by_one_does(seed: int, labelled: bool) -> None:
    values = _values(seed)
    assert _exposition(values, True, labelled) == _exposition(values, False, labelled)


def test_without_batching_each_value_is_observed_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "_BATCHED", False)
    registry = CollectorRegistry()
    histogram = Histogram("h", "test", buckets=BOUNDS, registry=registry)
    kept = ObservationBatch(histogram)
    kept.observe(3.0)
    assert registry.get_sample_value("h_count") == 1.0


def test_a_labelled_parent_refuses_as_observe_does() -> None:
    histogram = Histogram("h", "test", ("stage",), buckets=BOUNDS, registry=CollectorRegistry())
    with pytest.raises(ValueError):
        observe_all(histogram, [1.0])
