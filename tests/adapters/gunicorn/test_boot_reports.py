"""adapters/gunicorn/__init__.py's BootReports: what the master learns of each worker that ended.

A worker that never booted stops the server; one that crashed is logged as a warning; one whose loop
stopped in order (SERVER_MAX_REQUESTS, a reload, SIGTERM) is neither: gunicorn's own lines say why.
"""

from __future__ import annotations

import os

import pytest
import requests

from funcwsgi.adapters.gunicorn import BootReports

from ...support.logs import log_records
from ...support.polling import wait_for
from ...support.processes import FUNCWSGI, start


@pytest.fixture
def reports():
    made = BootReports()
    yield made
    os.close(made.reader)
    os.close(made.writer)


def test_a_booted_worker_that_stopped_in_order_is_known_as_such(reports):
    reports.report_booted(101)
    reports.report_booted(102)
    reports.report_stopped(101)
    assert reports.had_booted(101) and reports.stopped_in_order(101)
    assert reports.had_booted(102) and not reports.stopped_in_order(102)  # it crashed: it never said it stopped
    assert not reports.had_booted(103) and not reports.stopped_in_order(103)


def test_each_report_is_read_once_for_one_ended_worker(reports):
    reports.report_booted(7)
    reports.report_stopped(7)
    assert reports.had_booted(7) and reports.stopped_in_order(7)
    assert not reports.had_booted(7) and not reports.stopped_in_order(7)  # a new worker could get the pid again


def test_a_report_split_across_reads_is_put_back_together(reports):
    os.write(reports.writer, b"21")
    assert not reports.had_booted(21)
    os.write(reports.writer, b"5\n-215\n")
    assert reports.had_booted(215) and reports.stopped_in_order(215)


def warnings_of(output: str) -> list[str]:
    return [record["message"] for record in log_records(output) if record["level"] == "WARNING"]


@pytest.mark.slow("starts `funcwsgi serve` on gunicorn and waits for two workers to be recycled")
def test_a_worker_recycled_after_max_requests_is_no_warning():
    running = start(FUNCWSGI + ["serve"], "req_res", SERVER_ADAPTER="gunicorn", SERVER_MAX_REQUESTS="2")
    try:

        def recycled_twice() -> bool:
            requests.get(running.url + "/", timeout=5)
            return running.stdout.count("Booting worker with pid: ") >= 3

        wait_for(recycled_twice, 20, "two workers recycled", show=lambda: running.stdout, ignore=(requests.ConnectionError,))
        assert running.stdout.count("Autorestarting worker after current request.") >= 2
        assert warnings_of(running.stdout) == []
    finally:
        running.stop()
