"""Kyma functions that trace and publish: spans reach a real OTLP receiver, events a real HTTP receiver."""

from __future__ import annotations

import json
import time

import pytest
import requests

from ..support.logs import log_records
from ..support.paths import function_folder
from ..support.processes import Server
from ..support.receivers import EventReceiver
from . import serving

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"


@pytest.fixture(scope="module")
def servers(collector, receiver):
    common = {
        "TRACE_COLLECTOR_ENDPOINT": f"http://127.0.0.1:{collector.port}/v1/traces",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "PUBLISHER_PROXY_ADDRESS": receiver.url + "/ok",
        "SERVICE_NAMESPACE": "shop",
    }
    with serving(
        {
            "legacy": {**common, "FUNCTION_PATH": function_folder("kyma312_eventing"), "MOD_NAME": "handler", "FUNC_HANDLER": "main",
                       "FUNC_NAME": "legacy-orders", "FUNC_RUNTIME": "python312"},
            "python314": {**common, "HANDLER_PATH": function_folder("kyma314_sdk"), "HANDLER_MOD_NAME": "handler",
                          "HANDLER_FUNC_NAME": "main", "FUNC_NAME": "new-orders", "FUNC_TIMEOUT": "30"},
        }
    ) as running:
        yield running


def traced(trace_id: str = TRACE_ID) -> dict[str, str]:
    return {"traceparent": f"00-{trace_id}-{CALLER_SPAN}-01"}


def spans_of(collector: Server, trace_id: str, names: set[str], timeout: float = 15.0) -> dict[str, dict]:
    deadline = time.monotonic() + timeout
    while True:
        found = {}
        for span in log_records(collector.stdout):
            if span.get("traceId") == trace_id and span.get("name") in names:
                found[span["name"]] = span
        if set(found) >= names or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def last_event(receiver: EventReceiver, count: int):
    received = receiver.wait_for(count)
    assert len(received) >= count, "no event arrived"
    return received[count - 1]


@pytest.mark.slow("the first test: it starts the module's function servers, each a real gunicorn")
def test_legacy_emit_cloud_event(servers, receiver, collector):
    before = len(receiver.received)
    trace_id = "1" * 32
    response = requests.post(servers["legacy"].url + "/emit", json={"orderCode": "76"}, headers=traced(trace_id))
    assert response.status_code == 204
    arrived = last_event(receiver, before + 1)
    event = arrived.cloud_event()
    attributes = event.get_attributes()
    assert attributes["type"] == "sap.kyma.custom.shop.order.received.v1"
    assert attributes["source"] == "/kyma/legacy"
    assert attributes["eventtypeversion"] == "v1"
    assert event.get_data() == {"orderCode": "76"}
    assert arrived.headers["traceparent"].split("-")[1] == trace_id  # the call's trace travels with the event


def test_legacy_tracer_span_is_a_child_of_the_call(servers, collector):
    trace_id = "2" * 32
    requests.post(servers["legacy"].url + "/", json={}, headers=traced(trace_id))
    found = spans_of(collector, trace_id, {"legacy-work", "POST /"})
    assert set(found) == {"legacy-work", "POST /"}, collector.stdout[-2000:]
    assert found["POST /"]["parentSpanId"] == CALLER_SPAN  # the caller's trace is continued
    assert found["legacy-work"]["parentSpanId"] == found["POST /"]["spanId"]  # event.tracer's span is under the call


def test_legacy_publish_cloud_event_of_a_built_reply(servers, receiver):
    before = len(receiver.received)
    headers = {"ce-specversion": "1.0", "ce-type": "sap.kyma.custom.shop.order.created.v1", "ce-source": "/default/shop",
               "ce-id": "in-1", "ce-eventtypeversion": "v1", "Content-Type": "application/json"}
    assert requests.post(servers["legacy"].url + "/publish", data="{}", headers=headers).status_code == 204
    event = last_event(receiver, before + 1).cloud_event()
    attributes = event.get_attributes()
    assert attributes["type"] == "sap.kyma.custom.shop.order.replied.v1"
    assert attributes["source"] == "/default/shop"  # the incoming event's source, as Kyma built it
    assert attributes["id"] == "reply-7"
    assert attributes["eventtypeversion"] == "v1"
    assert event.get_data() == {"accepted": True}
    servers["legacy"].wait_for_output("event.publishCloudEvent is deprecated")
    servers["legacy"].wait_for_output("event.buildResponseCloudEvent is deprecated")


def test_python314_metadata_getters(servers):
    assert requests.get(servers["python314"].url + "/metadata").json() == {
        "function": "new-orders", "namespace": "shop", "runtime": "python314", "timeout": 30.0,
    }


def test_python314_cloud_event_in_and_out(servers, receiver, collector):
    before = len(receiver.received)
    trace_id = "3" * 32
    headers = {"ce-specversion": "1.0", "ce-type": "order.created", "ce-source": "/shop", "ce-id": "o-9",
               "ce-subject": "order-9", "Content-Type": "application/json", **traced(trace_id)}
    response = requests.post(servers["python314"].url + "/orders", data=json.dumps({"id": 9}), headers=headers)
    assert response.status_code == 202
    event = last_event(receiver, before + 1).cloud_event()
    attributes = event.get_attributes()
    assert attributes["type"] == "order.created.processed"
    assert attributes["source"] == "/kyma/python314"
    assert attributes["subject"] == "order-9"
    assert event.get_data() == {"input": {"id": 9}, "from": "/orders"}
    found = spans_of(collector, trace_id, {"python314-work", "POST /orders"})
    assert found["python314-work"]["parentSpanId"] == found["POST /orders"]["spanId"]


def test_python314_plain_call_has_no_cloud_event(servers):
    response = requests.post(servers["python314"].url + "/orders", json={"id": 1})
    assert (response.status_code, response.text) == (400, "expected a CloudEvent")
