"""The pure helpers of ``bench churn`` (the bench itself runs only by hand: it measures)."""

from __future__ import annotations

import json

import pytest

from bench.churn import (
    cache_counts,
    changed_families,
    growth_percent,
    rss_kib,
    series_by_family,
    split,
)

STATUS = """Name:\tpython
VmPeak:\t  300000 kB
VmRSS:\t  123456 kB
Threads:\t4
"""


def test_rss_is_read_from_the_vmrss_line() -> None:
    assert rss_kib(STATUS) == 123456


def test_a_status_without_vmrss_is_an_error_that_says_so() -> None:
    with pytest.raises(ValueError, match="VmRSS"):
        rss_kib("Name:\tkthreadd\n")


def test_series_are_counted_per_metric_name() -> None:
    samples = [("a_total", {"x": "1"}, 1.0), ("a_total", {"x": "2"}, 2.0), ("b", {}, 0.0)]
    assert series_by_family(samples) == {"a_total": 2, "b": 1}


def test_growth_is_relative_to_the_baseline() -> None:
    assert growth_percent(200, 210) == pytest.approx(5.0)
    assert growth_percent(200, 190) == pytest.approx(-5.0)
    assert growth_percent(0, 0) == 0.0
    assert growth_percent(0, 3) == float("inf")


def test_changed_families_name_what_came_and_went() -> None:
    before = {"a": 2, "b": 1, "gone": 4}
    after = {"a": 2, "b": 3, "new": 1}
    assert changed_families(before, after) == {"b": 2, "gone": -4, "new": 1}


@pytest.mark.parametrize(("total", "parts"), [(10, 3), (100_000, 10), (2, 5), (0, 4)])
def test_split_shares_add_up_and_differ_by_at_most_one(total: int, parts: int) -> None:
    shares = [split(total, parts, index) for index in range(parts)]
    assert sum(shares) == total
    assert max(shares) - min(shares) <= 1


def test_cache_counts_read_the_dumpers_three_documents() -> None:
    lines = [
        json.dumps({"n1": {}, "n2": {}}),
        json.dumps({}),
        json.dumps({"u1": {"tasks": [{}, {}]}, "u2": {"tasks": [{}]}}),
    ]
    assert cache_counts(lines) == {"nodes": 2, "hypernodes": 0, "jobs": 2, "tasks": 3}
