"""Kyma's own python312 test functions, run through the checks Kyma's serverless test suite makes.

The functions are kept as Kyma wrote them (tests/functions/kyma312_testsuite/).
As in Kyma's suite, one function stands in for the publisher proxy, and the
function under test receives CloudEvents in both content modes and publishes one
with ``event.emitCloudEvent``. They read ``event.ceHeaders``, pop keys from it,
and print ``vars()`` of the request's headers and body.
"""

from __future__ import annotations

import json
import uuid

import pytest
import requests

from funcwsgi.cloudevents import encode_binary

from ..support.paths import function_folder
from . import serving

SUITE = function_folder("kyma312_testsuite")


@pytest.fixture(scope="module")
def proxy():
    with serving({"proxy": {"FUNCTION_PATH": SUITE, "MOD_NAME": "publisher_proxy_mock", "FUNC_HANDLER": "main"}}) as running:
        yield running["proxy"]


@pytest.fixture(scope="module")
def servers(proxy):
    common = {"FUNCTION_PATH": SUITE, "FUNC_HANDLER": "main", "FUNC_RUNTIME": "python312"}
    with serving(
        {
            "cloud-event": {**common, "MOD_NAME": "cloud_event", "CE_SOURCE": "python312", "PUBLISHER_PROXY_ADDRESS": proxy.url + "/"},
            "tracing": {**common, "MOD_NAME": "tracing", "TRACING_TARGET": proxy.url + "/"},
        }
    ) as running:
        yield running


def structured(event_type: str, data: dict) -> tuple[dict[str, str], bytes]:
    document = {
        "specversion": "1.0", "type": event_type, "source": "/kyma/tests", "id": str(uuid.uuid4()),
        "eventtypeversion": "v1alpha2", "datacontenttype": "application/json", "data": data,
    }
    return {"Content-Type": "application/cloudevents+json"}, json.dumps(document).encode()


def binary(event_type: str, data: dict) -> tuple[dict[str, str], bytes]:
    headers, body = encode_binary(data, type=event_type, source="/kyma/tests", extensions={"eventtypeversion": "v1alpha2"})
    return headers, body


@pytest.mark.parametrize("encode", [binary, structured], ids=["binary", "structured"])
@pytest.mark.slow("the first test: it starts the publisher stand-in and the module's function servers")
def test_received_cloud_event_is_kept_from_ce_headers(servers, encode):
    # Kyma's CloudEventReceiveCheck: send an event, read back what the function kept of it.
    event_type = f"received.{encode.__name__}"
    headers, body = encode(event_type, {"hello": "world"})
    response = requests.post(servers["cloud-event"].url + "/", data=body, headers=headers)
    assert (response.status_code, response.text) == (200, "")
    kept = requests.get(servers["cloud-event"].url + "/", params={"type": event_type}).json()
    assert kept["ce-type"] == event_type and kept["ce-source"] == "/kyma/tests"
    assert kept["ce-specversion"] == "1.0" and kept["ce-eventtypeversion"] == "v1alpha2"
    assert uuid.UUID(kept["ce-id"]) and kept["data"] == {"hello": "world"}
    assert "extensions" not in kept  # popped from event.ceHeaders by the function


def test_emitted_cloud_event_reaches_the_publisher_proxy(servers):
    # Kyma's CloudEventSendCheck: a plain POST makes the function emit; the proxy stored it.
    response = requests.post(servers["cloud-event"].url + "/", json={"hello": "sent"})
    assert (response.status_code, response.text) == (200, "")
    stored = requests.get(servers["cloud-event"].url + "/", params={"type": "send-check"}).json()
    assert stored["ce-type"] == "send-check" and stored["ce-source"] == "python312"
    assert stored["ce-eventtypeversion"] == "v1alpha2" and stored["ce-specversion"] == "1.0"
    assert uuid.UUID(stored["ce-id"]) and stored["data"] == {"hello": "sent"}


def test_publisher_proxy_mock_answers_201_through_bottle(proxy):
    headers, body = structured("direct", {"hello": 1})
    assert requests.post(proxy.url + "/", data=body, headers=headers).status_code == 201
    assert requests.get(proxy.url + "/", params={"type": "direct", "source": "/kyma/tests"}).json()["data"] == {"hello": 1}


def test_tracing_function_prints_vars_of_headers_and_body(servers):
    response = requests.get(servers["tracing"].url + "/", headers={"X-Probe": "p"})
    assert response.status_code == 200
    assert isinstance(json.loads(response.text), dict)
    output = servers["tracing"].wait_for_output("event method:  GET")
    assert "X-Probe" in output or "HTTP_X_PROBE" in output
