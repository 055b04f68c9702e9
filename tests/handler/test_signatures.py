from __future__ import annotations

import pytest

from funcwsgi.errors import LoadError
from funcwsgi.handler.signatures import Signature, detect_signature, is_async


def req_res(req, res): ...
def req_res_default(req, res=None): ...
def req(request): ...
def none(): ...
def event_context(event, context): ...
def varargs(*args): ...
def kw_only(req, *, flag): ...
async def async_req_res(req, res): ...


class CallableObject:
    def __call__(self, req): ...


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        pytest.param(req_res, Signature.REQ_RES, id="req-res"),
        pytest.param(req_res_default, Signature.REQ_RES, id="req-res-default"),
        pytest.param(req, Signature.REQ, id="req"),
        pytest.param(none, Signature.NONE, id="none"),
        pytest.param(event_context, Signature.EVENT_CONTEXT, id="event-context"),
        pytest.param(varargs, Signature.REQ_RES, id="varargs"),
        pytest.param(async_req_res, Signature.REQ_RES, id="async"),
        pytest.param(CallableObject(), Signature.REQ, id="callable-object"),
        pytest.param(lambda: None, Signature.NONE, id="lambda"),
    ],
)
def test_detected(function, expected):
    assert detect_signature(function, None, where="f") is expected


def test_forced_signature_wins():
    assert detect_signature(req_res, "event-context", where="f") is Signature.EVENT_CONTEXT


def test_required_keyword_only_is_refused():
    with pytest.raises(LoadError, match=r"required keyword-only parameters \(flag\)"):
        detect_signature(kw_only, None, where="f")


def test_is_async():
    assert is_async(async_req_res)
    assert not is_async(req_res)
