from __future__ import annotations

import functools

import pytest

from funcwsgi.errors import LoadError
from funcwsgi.handler.signatures import Signature, detect_signature, is_async, reads_parameter


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


# -- whether a function reads its request (werkzeug is imported at start for one that does) ----------------


def answers_only(req, res):
    res.set_body("Hello, world!")


def reads_args(req, res):
    return req.args.get("name", "world")


def reads_late(req, res):
    greeting = "Hello"
    res.set_code(201)
    return f"{greeting}, {req.path}"


def hands_it_on(req, res):
    return helper(req)


def helper(request):
    return request


def closes_over_it(req, res):
    return lambda: req.method


def asks_locals(req, res):
    return locals()["req"]


def passes_args_on(*args):
    return helper(*args)


def reassigns_it(req, res):
    req = None
    return req


async def awaits(req, res):
    return await something(req)


async def something(value):
    return value


class Callable_:
    def __call__(self, req, res):
        return None


@functools.wraps(answers_only)
def wrapped(*args, **kwargs):
    return answers_only(*args, **kwargs)


@pytest.mark.parametrize(
    ("function", "reads"),
    [
        (answers_only, False),
        (reads_args, True),
        (reads_late, True),
        (hands_it_on, True),
        (closes_over_it, True),
        (asks_locals, True),
        (passes_args_on, True),
        (reassigns_it, True),  # it loads the name it stored: a conservative yes is harmless
        (awaits, True),
        (Callable_(), True),
        (wrapped, False),  # unwrapped to what it wraps, which reads nothing
        (lambda: None, False),
    ],
    ids=lambda value: getattr(value, "__name__", type(value).__name__),
)
def test_reads_parameter_tells_from_the_bytecode(function, reads):
    assert reads_parameter(function, 0) is reads
