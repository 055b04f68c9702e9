"""The sdk without a server (a function's unit tests), and publishing to a real receiver."""

from __future__ import annotations

import logging
import time

import pytest

import sdk
from funcwsgi import current as active
from funcwsgi.compat import cloudevents_lib as ce

from .support.paths import function_folder

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.fixture(autouse=True)
def no_served_config(monkeypatch):
    """As in a function's own unit tests: no service was built in this process."""
    monkeypatch.setattr(active, "_config", None)
    for name in ("PUBLISHER_PROXY_ADDRESS", "PUBLISHER_PROXY_TIMEOUT", "FUNC_NAME", "FUNC_NAMESPACE", "FUNC_BODY_MB_LIMIT", "SERVER_MAX_BODY_SIZE"):
        monkeypatch.delenv(name, raising=False)


def test_without_a_server_the_tracer_is_a_no_op():
    with sdk.get_tracer().start_as_current_span("work") as span:
        assert not span.is_recording()


def test_without_a_server_the_logger_is_a_plain_logger():
    logger = sdk.get_logger()
    assert isinstance(logger, logging.Logger) and logger.name == "function"


def test_without_a_server_there_is_no_call():
    assert sdk.get_request() is None and sdk.get_cloud_event() is None


def test_unconfigured_publishing_names_the_setting():
    with pytest.raises(sdk.PublisherNotConfigured) as caught:
        sdk.emit_cloud_event("order.created", "/shop", {"id": 7})
    assert "PUBLISHER_PROXY_ADDRESS is not set" in str(caught.value)
    assert isinstance(caught.value, sdk.PublishError)


def test_metadata_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("FUNC_NAME", "orders")
    monkeypatch.setenv("FUNC_NAMESPACE", "shop")
    monkeypatch.setenv("FUNC_BODY_MB_LIMIT", "2")
    assert (sdk.get_function_name(), sdk.get_namespace(), sdk.get_runtime()) == ("orders", "shop", "python314")
    assert sdk.get_timeout() == 180 and type(sdk.get_timeout()) is int  # Kyma: int(FUNC_TIMEOUT); JSON "180", not "180.0"
    assert sdk.get_body_size_limit() == 2  # megabytes, as Kyma counts
    monkeypatch.setenv("SERVER_MAX_BODY_SIZE", str(3 * 1024 * 1024 // 2))
    assert sdk.get_body_size_limit() == 1.5


def test_metadata_of_the_served_function(client_for):
    client = client_for(
        "observed",
        environ={"FUNC_NAME": "orders", "FUNC_LABELS": "app=shop,tier=web", "FUNC_ANNOTATIONS": '{"owner": "team-a"}', "FUNC_TIMEOUT": "30"},
    )
    assert client.get("/metadata").get_json() == {
        "name": "orders", "namespace": "", "runtime": "python314", "timeout": 30.0, "body_limit": 100,
        "labels": {"app": "shop", "tier": "web"}, "annotations": {"owner": "team-a"},
    }


def test_emit_posts_a_structured_event(receiver, monkeypatch):
    monkeypatch.setenv("PUBLISHER_PROXY_ADDRESS", receiver.url + "/ok")
    before = len(receiver.received)
    sdk.emit_cloud_event("order.created", "/shop", {"id": 7}, {"subject": "order-7"})
    arrived = receiver.wait_for(before + 1)[-1]
    assert arrived.headers["content-type"].startswith("application/cloudevents+json")
    event = arrived.cloud_event()
    attributes = ce.attribute_strings(event)
    assert (attributes["type"], attributes["source"], attributes["subject"]) == ("order.created", "/shop", "order-7")
    assert attributes["id"] and ce.data_of(event) == {"id": 7}


def test_publish_a_ready_event_or_a_mapping(receiver, monkeypatch):
    monkeypatch.setenv("PUBLISHER_PROXY_ADDRESS", receiver.url + "/ok")
    before = len(receiver.received)
    sdk.publish_cloud_event(ce.make_event({"type": "a", "source": "/s", "id": "fixed-1"}, "text"))
    sdk.publishCloudEvent({"type": "b", "source": "/s", "id": "fixed-2", "specversion": "1.0", "data": [1]})
    first, second = receiver.wait_for(before + 2)[-2:]
    assert ce.attribute_strings(first.cloud_event())["id"] == "fixed-1" and ce.data_of(first.cloud_event()) == "text"
    assert ce.attribute_strings(second.cloud_event())["id"] == "fixed-2" and ce.data_of(second.cloud_event()) == [1]
    with pytest.raises(TypeError):
        sdk.publish_cloud_event("not an event")


@pytest.mark.skipif(ce.GENERATION != 2, reason="the cloudevents.v1 API exists only in cloudevents 2.x")
def test_publish_an_event_of_the_older_api(receiver, monkeypatch):
    from cloudevents.v1.http import CloudEvent as OlderCloudEvent

    monkeypatch.setenv("PUBLISHER_PROXY_ADDRESS", receiver.url + "/ok")
    before = len(receiver.received)
    sdk.publish_cloud_event(OlderCloudEvent({"type": "old", "source": "/s"}, {"v": 1}))
    event = receiver.wait_for(before + 1)[-1].cloud_event()
    assert ce.attribute_strings(event)["type"] == "old" and ce.data_of(event) == {"v": 1}


def test_a_refusal_raises_with_status_and_body(receiver, monkeypatch):
    monkeypatch.setenv("PUBLISHER_PROXY_ADDRESS", receiver.url + "/reject")
    with pytest.raises(sdk.PublishError) as caught:
        sdk.emit_cloud_event("t", "/s", None)
    assert caught.value.status == 503 and caught.value.body == "queue full"
    assert "answered 503: queue full" in str(caught.value)


def test_publishing_waits_a_bounded_time(receiver, monkeypatch):
    monkeypatch.setenv("PUBLISHER_PROXY_ADDRESS", receiver.url + "/slow")
    monkeypatch.setenv("PUBLISHER_PROXY_TIMEOUT", "0.3")
    started = time.monotonic()
    with pytest.raises(sdk.PublishError) as caught:
        sdk.emit_cloud_event("t", "/s", None)
    assert time.monotonic() - started < 2.5
    assert caught.value.status is None and "ReadTimeout" in str(caught.value)


def test_a_call_forwards_the_callers_trace_context_when_tracing_is_off(receiver):
    from werkzeug.test import Client

    from funcwsgi import make_app

    app = make_app(environ={"PUBLISHER_PROXY_ADDRESS": receiver.url + "/ok"}, handler_folder=function_folder("observed"))
    before = len(receiver.received)
    response = Client(app).get("/work?publish=1", headers={"traceparent": TRACEPARENT, "tracestate": "k=v"})
    assert response.status_code == 204
    arrived = receiver.wait_for(before + 1)[-1]
    assert arrived.headers["traceparent"] == TRACEPARENT and arrived.headers["tracestate"] == "k=v"


def test_attributes_the_specification_refuses_raise_value_error(receiver, monkeypatch):
    # Checked by funcwsgi under both generations (1.x itself checks no names).
    monkeypatch.setenv("PUBLISHER_PROXY_ADDRESS", receiver.url + "/ok")
    with pytest.raises(ValueError, match="attribute name\\(s\\) 'BadName'"):
        sdk.emit_cloud_event("t", "/s", None, {"BadName": "x"})


def test_each_mounted_service_sees_its_own_metadata():
    from werkzeug.test import Client

    from funcwsgi import make_app

    first = Client(make_app(environ={"FUNC_NAME": "first"}, handler_folder=function_folder("observed")))
    second = Client(make_app(environ={"FUNC_NAME": "second"}, handler_folder=function_folder("observed")))
    assert first.get("/metadata").get_json()["name"] == "first"
    assert second.get("/metadata").get_json()["name"] == "second"


def test_without_a_server_a_secret_is_read_from_the_environments_folders(monkeypatch, tmp_path):
    (tmp_path / "api-key").write_text("k-123\n")
    monkeypatch.setenv("HANDLER_SECRETS_PATH", f"{tmp_path / 'none'}:{tmp_path}")
    assert sdk.secret("api-key") == "k-123"
    with pytest.raises(sdk.SecretNotFound) as caught:
        sdk.secret("other")
    assert str(caught.value) == f"secret 'other' not found: no file 'other' in {tmp_path / 'none'}, {tmp_path} (HANDLER_SECRETS_PATH)"
    assert isinstance(caught.value, LookupError)


@pytest.mark.parametrize("name", ["", "..", "a/b", "../etc/passwd"])
def test_a_secret_name_with_a_path_is_refused(monkeypatch, tmp_path, name):
    monkeypatch.setenv("HANDLER_SECRETS_PATH", str(tmp_path))
    with pytest.raises(ValueError, match="expected a file name"):
        sdk.secret(name)


def test_the_default_secret_folders_are_the_platforms_mounts(monkeypatch):
    monkeypatch.delenv("HANDLER_SECRETS_PATH", raising=False)
    with pytest.raises(sdk.SecretNotFound) as caught:
        sdk.secret("funcwsgi-test-no-such-secret")
    assert "/var/openfaas/secrets, /run/secrets, /workspace/secret, /secret/mount/path" in str(caught.value)


# -- a publish in flight stops when its call is cancelled, whatever it waits for ----------


@pytest.fixture
def unresponsive_proxy():
    """(a listener whose queue of connections is full: a connect waits, the listener that never reads: a send
    waits once the buffers are full), as a proxy that stopped taking calls looks from the client."""
    import socket

    with socket.socket() as full, socket.socket() as queued:
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        queued.connect(full.getsockname())  # takes the one place in the queue; nothing accepts it
        with socket.socket() as deaf:
            deaf.bind(("127.0.0.1", 0))
            deaf.listen(1)
            yield f"http://127.0.0.1:{full.getsockname()[1]}/", f"http://127.0.0.1:{deaf.getsockname()[1]}/"


@pytest.mark.parametrize(("which", "body"), [(0, b"{}"), (1, b"x" * (64 << 20))], ids=["connecting", "sending"])
def test_a_publish_stops_within_a_slice_of_its_call_being_cancelled(unresponsive_proxy, which, body):
    from sdk.publishing import Cancelled, post

    started = time.monotonic()
    with pytest.raises(Cancelled):
        post(unresponsive_proxy[which], body, {}, 10, lambda: time.monotonic() - started > 0.3)
    assert time.monotonic() - started < 3  # not the publish timeout's 10 s (a slice is 0.1 s; the bound leaves room for load)


def test_a_publish_that_cannot_connect_gives_up_at_its_timeout(unresponsive_proxy):
    from sdk.publishing import post

    started = time.monotonic()
    with pytest.raises(TimeoutError):
        post(unresponsive_proxy[0], b"{}", {}, 0.5, None)
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param((5, "/s", 1), "invalid CloudEvent attribute(s) type (int 5): expected strings", id="type-not-a-string"),
        pytest.param(("", "/s", 1), "missing or empty CloudEvent attribute(s): type", id="type-empty"),
        pytest.param(("t", "/s", 1, 5), "optional_attributes must be a mapping of attribute names to values, not int", id="attributes-not-a-mapping"),
    ],
)
def test_a_bad_argument_to_emit_says_which_and_why(arguments, message):
    with pytest.raises((ValueError, TypeError)) as caught:
        sdk.emit_cloud_event(*arguments)
    assert str(caught.value) == message


def test_an_empty_secrets_path_says_so_once(monkeypatch):
    monkeypatch.setenv("HANDLER_SECRETS_PATH", "")
    with pytest.raises(sdk.SecretNotFound) as caught:
        sdk.secret("token")
    assert str(caught.value) == "secret 'token' not found: HANDLER_SECRETS_PATH is empty, so no folder is searched"
