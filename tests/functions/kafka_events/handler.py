"""A function for the Kafka trigger tests: what it does depends on the record's body.

Every call is appended to the file ``CALL_LOG`` names, as one JSON line, before
the function acts: ``fail:x`` raises, ``crash`` kills the process the first
time, ``slow:S`` sleeps S seconds, ``reply:x`` returns a CloudEvent (of
whichever generation of the cloudevents library is installed).
"""

import json
import os
import time

from funcwsgi.compat.cloudevents_lib import make_event

CALL_LOG = os.environ["CALL_LOG"]


def main(req, res):
    body = req.get_data(as_text=True)
    record = req.environ["funcwsgi.kafka.record"]
    call = {
        "body": body,
        "pid": os.getpid(),
        "topic": record.topic,
        "partition": record.partition,
        "offset": record.offset,
        "content_type": req.content_type,
        "ce": {name[3:].lower(): value for name, value in req.headers.items() if name.lower().startswith("ce-")},
        "traceparent": req.headers.get("traceparent"),
    }
    command, _, argument = body.partition(":")
    crash_marker = CALL_LOG + ".crashed"
    if command == "crash" and not os.path.exists(crash_marker):
        open(crash_marker, "w").close()
        os._exit(3)
    with open(CALL_LOG, "a") as log:
        log.write(json.dumps(call) + "\n")
    if command == "fail":
        raise RuntimeError(f"refusing {argument}")
    if command == "slow":
        time.sleep(float(argument))
    if command == "reply":
        attributes = {"id": f"reply-{record.offset}", "source": "/tests/kafka", "type": "dev.funcwsgi.test.reply", "datacontenttype": "text/plain"}
        return make_event(attributes, f"replied to {argument}".encode())
    return "ok"


def stop():
    with open(CALL_LOG + ".stopped", "w") as marker:
        marker.write("stopped\n")
