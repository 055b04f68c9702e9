"""Kyma <=3.12 functions, deployed as Kyma deployed them (sources in a mounted folder, Kyma's env names)."""

from __future__ import annotations

import pytest
import requests

from ..support.paths import function_folder
from . import serving

KYMA_ENV = {"FUNCTION_PATH": function_folder("kyma312_event"), "MOD_NAME": "handler", "FUNC_TIMEOUT": "180", "FUNC_RUNTIME": "python312"}


@pytest.fixture(scope="module")
def servers():
    with serving(
        {
            "hello": {**KYMA_ENV, "FUNC_HANDLER": "main", "FUNC_NAME": "hello-kyma", "SERVICE_NAMESPACE": "default"},
            "cloud-event": {**KYMA_ENV, "FUNC_HANDLER": "cloud_event"},
            "request": {**KYMA_ENV, "FUNC_HANDLER": "request_api"},
            "tuple": {**KYMA_ENV, "FUNC_HANDLER": "status_tuple"},
            "reply": {**KYMA_ENV, "FUNC_HANDLER": "reply"},
        }
    ) as running:
        yield running


def test_hello_world_names_function_and_runtime(servers):
    response = requests.get(servers["hello"].url + "/")
    assert response.status_code == 200
    assert response.text == "Hello World from the Kyma Function hello-kyma running on python312!"
    servers["hello"].wait_for_output("Hello World from the Kyma Function hello-kyma")


def test_binary_cloud_event_attributes(servers):
    response = requests.post(
        servers["cloud-event"].url + "/",
        json={"orderCode": "3211213"},
        headers={
            "ce-specversion": "1.0", "ce-type": "sap.kyma.custom.commerce.order.created.v1",
            "ce-source": "/default/sap.kyma/id", "ce-id": "A234-1234-1234", "ce-eventtypeversion": "v1",
            "ce-myextension": "ext-value",
        },
    )
    assert response.json() == {
        "type": "sap.kyma.custom.commerce.order.created.v1",
        "source": "/default/sap.kyma/id",
        "id": "A234-1234-1234",
        "specversion": "1.0",
        "eventtypeversion": "v1",
        "extension": "ext-value",
        "data": {"orderCode": "3211213"},
    }


def test_plain_call_has_none_cloud_event_keys(servers):
    body = requests.post(servers["cloud-event"].url + "/", json={"a": 1}).json()
    assert body["type"] is None and body["id"] is None and body["data"] == {"a": 1}


def test_request_api_of_the_extension(servers):
    response = requests.post(servers["request"].url + "/?q=shoes", json={"n": 1}, headers={"X-Custom": "c"})
    assert response.json() == {
        "method": "POST", "args": "shoes", "query": "shoes", "json": {"n": 1}, "get_data": '{"n": 1}', "header": "c",
    }


def test_status_tuple(servers):
    response = requests.get(servers["tuple"].url + "/")
    assert (response.status_code, response.content) == (204, b"")


def test_build_response_cloud_event_is_deprecated_but_works(servers):
    response = requests.post(
        servers["reply"].url + "/", json={}, headers={"ce-source": "/shop", "ce-specversion": "1.0", "ce-eventtypeversion": "v1", "ce-type": "t", "ce-id": "1"}
    )
    assert response.json() == {
        "type": "order.replied", "source": "/shop", "eventtypeversion": "v1", "specversion": "1.0",
        "id": "reply-1", "data": {"ok": True}, "datacontenttype": "application/json",
    }
    output = servers["reply"].wait_for_output("buildResponseCloudEvent is deprecated")
    requests.post(servers["reply"].url + "/", json={})
    assert output.count("buildResponseCloudEvent is deprecated") == 1
