"""A plain function that answers with its process's garbage-collector state, as JSON.

tests/test_collector.py serves it on each server to check that a process that
started serving collects at its configured threshold again (funcwsgi/collector.py).
"""

import gc
import json


def main(req, res):
    res.set_body(json.dumps({"threshold": gc.get_threshold(), "enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}))
