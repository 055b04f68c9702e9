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


def _counts(series):
    return series.calls, series.failures, round(series.seconds, 9), list(series.buckets)


def test_tallied_calls_are_counted_at_a_scrape_as_recorded_ones_are():
    """A call's tally (the metrics layer's for a whole answer) reaches the counts by the scrape: each bucket, the sum."""
    from funcwsgi.metrics.calls import BUCKETS, CallSeries, LocalCallMetrics, LocalSeries

    durations = [0.0, 0.001, *BUCKETS[:-1], 0.0051, 0.3, 179.9, 181.0, 0.005]  # every bound itself: `le` counts it in
    recorded = LocalSeries()
    metrics = LocalCallMetrics()
    tallied: CallSeries = metrics.series["GET"]
    for seconds in durations:
        recorded.record(seconds, False)
        tallied.tally(seconds, False)
    assert tallied.calls == 0  # not counted yet
    (calls,) = [family for family in metrics.collect() if family.name == "function_calls"]
    assert [sample.value for sample in calls.samples if sample.labels["method"] == "GET"] == [len(durations)]
    assert _counts(tallied) == _counts(recorded)


def test_a_failed_call_is_counted_at_once_with_its_failure():
    from funcwsgi.metrics.calls import CallSeries

    series = CallSeries()
    series.tally(0.2, False)
    series.tally(0.1, True)
    assert (series.calls, series.failures) == (1, 1)
    series.fold()
    assert (series.calls, series.failures) == (2, 1)


def test_tallies_fold_on_their_own_and_none_is_lost_between_threads():
    """Calls on several threads tally at once, folding as FOLD_AT gather: every one is counted."""
    import threading

    from funcwsgi.metrics.calls import FOLD_AT, CallSeries

    series = CallSeries()
    per_thread = 3 * FOLD_AT + 7
    start = threading.Barrier(4)

    def calls() -> None:
        start.wait()
        for _ in range(per_thread):
            series.tally(0.02, False)

    threads = [threading.Thread(target=calls) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert series.calls >= 4 * per_thread - FOLD_AT  # folded on their own, most of them
    series.fold()
    assert series.calls == sum(series.buckets) == 4 * per_thread
    assert series.buckets[2] == 4 * per_thread  # 0.02: the 0.025 bucket
