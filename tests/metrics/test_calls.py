"""metrics/calls.py: the call series' buckets and their start in a new process."""

from __future__ import annotations


def test_the_buckets_are_the_ones_kyma_dashboards_use():
    """Mutations caught: any bound of ``BUCKETS`` changed."""
    from funcwsgi.metrics.calls import LocalCallMetrics

    (duration,) = [family for family in LocalCallMetrics().collect() if family.name == "function_duration_seconds"]
    bounds = [sample.labels["le"] for sample in duration.samples if sample.name.endswith("_bucket") and sample.labels["method"] == "GET"]
    assert bounds == ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1.0", "2.5", "5.0", "10.0", "30.0", "60.0", "180.0", "+Inf"]


def test_a_new_process_starts_counting_from_zero():
    """Mutations caught: a series starting at 1 call, failure or second (``self.calls = 1`` ...)."""
    from funcwsgi.metrics.calls import LocalCallMetrics

    assert {sample.value for family in LocalCallMetrics().collect() for sample in family.samples} == {0.0}
