"""FunctionRequest: werkzeug's request, with werkzeug's __init__ work deferred to first use."""

from __future__ import annotations

import pytest
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from funcwsgi.request import _COMPUTED_IN_INIT, FunctionRequest


def environ() -> dict:
    return EnvironBuilder(
        path="/api/items/%C3%A9",
        base_url="http://example.test:8443/mount/",
        query_string="a=1&b=two",
        headers={"X-Test": "yes"},
        environ_base={"REMOTE_ADDR": "10.1.2.3"},
        method="post",
        data=b"payload",
    ).get_environ()


def test_every_value_werkzeug_computes_is_the_same_on_first_read():
    reference = Request(environ())
    request = FunctionRequest(environ())
    assert _COMPUTED_IN_INIT >= {"method", "path", "headers", "root_path", "query_string"}
    for name in sorted(_COMPUTED_IN_INIT - {"headers"}):
        assert getattr(request, name) == getattr(reference, name), name
    assert dict(request.headers) == dict(reference.headers)
    assert request.url == reference.url
    assert request.args.to_dict() == {"a": "1", "b": "two"}
    assert request.body == b"payload"


def test_nothing_is_computed_until_read():
    request = FunctionRequest(environ())
    assert not _COMPUTED_IN_INIT & set(vars(request))
    assert request.environ["werkzeug.request"] is request
    assert request.method == "POST"
    assert _COMPUTED_IN_INIT <= set(vars(request))


def test_a_value_set_before_any_read_is_kept():
    request = FunctionRequest(environ())
    request.path = "/rewritten"
    assert request.method == "POST"
    assert request.path == "/rewritten"


def test_unknown_attributes_raise_attribute_error():
    request = FunctionRequest(environ())
    with pytest.raises(AttributeError, match="'FunctionRequest' object has no attribute 'nope'"):
        request.nope  # noqa: B018
    assert not hasattr(request, "nope")
    assert request.cloud_event is None
