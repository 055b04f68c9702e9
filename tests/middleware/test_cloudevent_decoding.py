"""CloudEvents in (binary, structured, malformed, batch) and out (a returned event)."""

from __future__ import annotations

import json

import pytest

from funcwsgi.compat import cloudevents_lib as ce

from ..support.wsgi import StartResponse, drain

BINARY = {"ce-id": "a1", "ce-source": "/shop", "ce-type": "order.created", "ce-specversion": "1.0"}


@pytest.fixture(scope="module")
def client():
    from werkzeug.test import Client

    from funcwsgi import make_app

    from ..support.paths import function_folder

    return Client(make_app(environ={}, handler_folder=function_folder("observed")))


def test_binary_event_reaches_the_function(client):
    response = client.post("/event", json={"id": 7}, headers=BINARY)
    body = response.get_json()
    assert response.status_code == 200
    assert body["data"] == {"id": 7}
    assert body["event"]["type"] == "order.created" and body["event"]["id"] == "a1"
    assert body["same"] is True  # req.cloud_event is sdk.get_cloud_event()
    assert json.loads(body["body"]) == {"id": 7}  # the body is still readable


def test_structured_event_reaches_the_function(client):
    document = {"id": "b2", "source": "/s", "type": "t", "specversion": "1.0", "data": {"x": 1}}
    response = client.post("/event", data=json.dumps(document), content_type="application/cloudevents+json; charset=utf-8")
    body = response.get_json()
    assert body["event"]["id"] == "b2" and body["data"] == {"x": 1}


def test_plain_request_has_no_event(client):
    body = client.post("/event", json={"id": 7}).get_json()
    assert body == {"event": None, "same": True, "body": '{"id": 7}'}


def test_batch_is_handed_over_undecoded(client):
    batch = json.dumps([{"id": "1", "source": "/s", "type": "t", "specversion": "1.0"}])
    body = client.post("/event", data=batch, content_type="application/cloudevents-batch+json").get_json()
    assert body["event"] is None and body["body"] == batch


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        pytest.param({"headers": {"ce-type": "t", "ce-source": "/s"}}, "missing required CloudEvent header(s): ce-id, ce-specversion", id="binary-missing"),
        pytest.param({"data": "{nope", "content_type": "application/cloudevents+json"}, "the structured CloudEvent is not valid JSON", id="structured-invalid"),
        pytest.param({"data": '{"type": "t"}', "content_type": "application/cloudevents+json"}, "missing required CloudEvent attribute(s): id, source, specversion", id="structured-missing"),
    ],
)
def test_malformed_event_is_400_and_the_function_is_not_called(client, kwargs, reason):
    response = client.post("/fail", **kwargs)  # /fail would answer 500 if it ran
    assert response.status_code == 400
    assert response.text == f"Bad Request: {reason}"


def test_returned_event_is_a_binary_mode_reply(client):
    response = client.get("/reply")
    assert response.status_code == 200
    headers = {k.lower(): v for k, v in response.headers.items()}
    assert headers["ce-type"] == "order.accepted" and headers["ce-subject"] == "7"
    assert headers["content-length"] == str(len(response.data))
    event = ce.decode(headers, response.data)
    assert ce.data_of(event) == {"accepted": True}


def test_legacy_event_gets_ce_keys_from_a_structured_event(client_for):
    document = {"id": "c3", "source": "/s", "type": "t", "specversion": "1.0", "subject": "sub", "data": {"x": 1}}
    legacy = client_for("event_context")
    body = legacy.post("/", data=json.dumps(document), content_type="application/cloudevents+json").get_json()
    assert body["data"] == {"x": 1}
    assert {k: body["ce"][k] for k in ("ce-id", "ce-source", "ce-type", "ce-specversion", "ce-subject")} == {
        "ce-id": "c3", "ce-source": "/s", "ce-type": "t", "ce-specversion": "1.0", "ce-subject": "sub",
    }


def test_layer_absent_when_disabled(client_for):
    client = client_for("observed", server_cloudevents=False)
    assert "cloudevents" not in client.application.layers
    response = client.post("/event", headers={"ce-type": "t"})
    assert response.get_json()["event"] is None


def test_a_chunked_event_leaves_no_spool_open():
    """A chunked CloudEvent is spooled by the body-limit layer and re-read by this one:
    once the response is done, nothing of it is left open (no ResourceWarning)."""
    import gc
    import io
    import warnings

    from werkzeug.test import EnvironBuilder

    from funcwsgi import make_app

    from ..support.paths import function_folder

    app = make_app(environ={}, handler_folder=function_folder("observed"))
    body = json.dumps({"id": 7}).encode()
    gc.collect()  # what earlier tests in this process left unclosed warns here, not below
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for _ in range(3):
            environ = EnvironBuilder(method="POST", path="/event", headers=dict(BINARY), content_type="application/json").get_environ()
            environ.pop("CONTENT_LENGTH", None)
            environ.update({"wsgi.input": io.BytesIO(body), "HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input_terminated": True})
            start = StartResponse()
            response = app(environ, start)
            reply = drain(response)
            assert start.status == "200 OK" and json.loads(reply)["data"] == {"id": 7}
            del environ, response
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


# Cases the mutation run (make mutation, docs/reliability.md) found untested.


def test_a_binary_events_content_type_decides_its_data(client):
    """Mutation caught: the request's Content-Type not handed to the decoder (``if content_type`` inverted):
    the event's ``datacontenttype`` is the request's, with either generation of the cloudevents library."""
    response = client.post("/event", headers=BINARY, data='{"a": 1}', content_type="application/json; charset=utf-8")
    assert response.json["event"]["datacontenttype"] == "application/json; charset=utf-8"
    assert response.json["data"] == {"a": 1}


def test_ce_specversion_alone_is_taken_for_an_event_and_refused(client):
    """Mutation caught: the detection ``ce-specversion or ce-id or ...`` made ``ce-specversion and ce-id or ...``."""
    response = client.post("/fail", headers={"ce-specversion": "1.0"}, data="x")
    assert response.status_code == 400 and response.text.startswith("Bad Request: missing required CloudEvent header(s): ")


@pytest.mark.parametrize("method", ["POST", "HEAD"])
def test_the_400_has_its_body_except_for_head(method):
    """Mutations caught: ``== "HEAD"`` made ``<``, ``<=`` or ``is`` in the 400's body choice."""
    import io

    from funcwsgi.middleware.cloudevent_decoding import CloudEventsMiddleware

    start = StartResponse()
    environ = {"REQUEST_METHOD": method.encode().decode(), "CONTENT_TYPE": "application/cloudevents+json", "wsgi.input": io.BytesIO(b"{nope")}
    body = b"".join(CloudEventsMiddleware(lambda environ, start_response: [])(environ, start))
    assert start.status == "400 Bad Request"
    assert body == (b"" if method == "HEAD" else b"Bad Request: the structured CloudEvent is not valid JSON")


def test_the_layer_spells_the_structured_type_as_the_codec_does():
    """The layer names the structured content type itself, so that a plain call never imports the codec."""
    from funcwsgi import cloudevents
    from funcwsgi.middleware import cloudevent_decoding as layer

    assert layer.STRUCTURED == cloudevents.STRUCTURED
