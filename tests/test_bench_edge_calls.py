"""bench/edge_calls.py: what a count under callgrind adds up."""

from __future__ import annotations

from bench.edge_calls import counted


def test_a_run_split_into_several_dumps_is_counted_whole(tmp_path):
    """Another process's `callgrind_control --dump` (bench.cold_start does one) splits a run into parts."""
    (tmp_path / "callgrind.out").write_text("events: Ir\nsummary: 1000\ntotals: 1000\n")
    (tmp_path / "callgrind.out.1").write_text("events: Ir\nsummary: 250\ntotals: 250\n")
    (tmp_path / "callgrind.out.2").write_text("events: Ir\ntotals: 5\n")
    assert counted(tmp_path) == 1255
