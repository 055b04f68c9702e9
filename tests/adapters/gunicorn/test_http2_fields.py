"""The header-section rules of the edge's HTTP/2 (funcwsgi/adapters/gunicorn/http2_fields.py), in process."""

from __future__ import annotations

import base64

import hpack
import pytest
from hyperframe.frame import SettingsFrame

from funcwsgi.adapters.gunicorn.http2_fields import KNOWN_FIELDS, Malformed, h2c_settings, request_section, trailer_section

GET = [(b":method", b"GET"), (b":scheme", b"http"), (b":path", b"/a?b=c"), (b":authority", b"example")]


def test_a_request_section_gives_method_target_fields_and_length():
    method, target, headers, length = request_section([*GET, (b"x-one", b"1"), (b"content-length", b"12")])
    assert (method, target, length) == ("GET", b"/a?b=c", 12)
    assert headers == [(b"x-one", b"1"), (b"content-length", b"12"), (b"host", b"example")]  # :authority as host


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param([*GET, (b"X-Upper", b"1")], id="uppercase-name"),
        pytest.param([*GET, (b"x value", b"1")], id="space-in-name"),
        pytest.param([*GET, (b"x:y", b"1")], id="colon-in-name"),
        pytest.param([*GET, (b"", b"1")], id="empty-name"),
        pytest.param([*GET, (b"x", b"a\rb")], id="cr"),
        pytest.param([*GET, (b"x", b"a\x00b")], id="nul"),
        pytest.param([*GET, (b"x", b"\ta")], id="leading-tab"),
        pytest.param([*GET, (b"x", b"a ")], id="trailing-space"),
        pytest.param([*GET, (b"connection", b"close")], id="connection"),
        pytest.param([*GET, (b"te", b"gzip")], id="te-gzip"),
        pytest.param([*GET, (b":path", b"/again")], id="duplicate-path"),
        pytest.param([(b":method", b"GET"), (b"x", b"1"), (b":scheme", b"http"), (b":path", b"/")], id="pseudo-after-field"),
        pytest.param([*GET, (b":status", b"200")], id="response-pseudo"),
        pytest.param(GET[1:], id="no-method"),
        pytest.param([(b":method", b"GET"), (b":scheme", b"http"), (b":path", b"")], id="empty-path"),
        pytest.param([(b":method", b"GET"), (b":scheme", b"http"), (b":path", b"a")], id="path-without-slash"),
        pytest.param([(b":method", b"CONNECT"), (b":authority", b"x:1")], id="connect"),
        pytest.param([*GET, (b"host", b"elsewhere")], id="host-not-authority"),
        pytest.param([*GET, (b"content-length", b"1"), (b"content-length", b"2")], id="two-lengths"),
        pytest.param([*GET, (b"content-length", b"-1")], id="negative-length"),
    ],
)
def test_a_malformed_request_section_is_refused(fields):
    with pytest.raises(Malformed):
        request_section(fields)


def test_te_trailers_and_options_star_are_well_formed():
    assert request_section([*GET, (b"te", b"trailers")])[0] == "GET"
    assert request_section([(b":method", b"OPTIONS"), (b":scheme", b"http"), (b":path", b"*")])[1] == b"*"


def test_trailers():
    assert trailer_section([(b"x-checksum", b"1")]) is False
    assert trailer_section([(b"content-length", b"1")]) is True  # may not be a trailer: the stream gets 400
    for bad in ([(b":path", b"/x")], [(b"X", b"1")], [(b"x:y", b"1")], [(b"transfer-encoding", b"chunked")], [(b"x", b"a\nb")]):
        with pytest.raises(Malformed):
            trailer_section(bad)


def test_a_name_seen_before_is_still_checked_where_its_value_or_count_matters():
    """Well-formed names are remembered (their bytes need no second look); te, host and content-length never are."""
    for _ in range(2):
        request_section([*GET, (b"x-one", b"1"), (b"te", b"trailers"), (b"host", b"example"), (b"content-length", b"1")])
    for bad in ([(b"te", b"gzip")], [(b"host", b"a"), (b"host", b"a")], [(b"content-length", b"1"), (b"content-length", b"2")], [(b"x-one", b"a\rb")]):
        with pytest.raises(Malformed):
            request_section([*GET, *bad])


def test_a_field_known_from_an_earlier_request_is_still_refused_where_its_place_or_count_makes_it_malformed():
    """Whole fields found well-formed are remembered; where one goes and how often it comes is checked every time."""
    assert request_section([*GET, (b"x-one", b"1")])[0] == "GET"
    assert request_section([*GET, (b"x-one", b"1")])[2] == [(b"x-one", b"1"), (b"host", b"example")]
    for bad in ([(b"x-one", b"1"), *GET], [*GET, GET[0]], [*GET, (b"x-one", b"1"), GET[2]], GET[1:]):
        with pytest.raises(Malformed):
            request_section(bad)


def test_a_never_indexed_field_is_not_remembered():
    secret = hpack.NeverIndexedHeaderTuple(b"authorization", b"Bearer secret")
    assert request_section([*GET, secret])[2][0] == secret
    assert (b"authorization", b"Bearer secret") not in KNOWN_FIELDS
    assert (b":method", b"GET") in KNOWN_FIELDS


SETTINGS = base64.urlsafe_b64encode(SettingsFrame(0, settings={SettingsFrame.MAX_CONCURRENT_STREAMS: 10}).serialize_body()).rstrip(b"=")
UPGRADE = [(b"host", b"x"), (b"connection", b"Upgrade, HTTP2-Settings"), (b"upgrade", b"h2c"), (b"http2-settings", SETTINGS)]


@pytest.mark.parametrize(
    "version, headers, wanted",
    [
        pytest.param("1.1", UPGRADE, True, id="upgrade"),
        pytest.param("1.1", [*UPGRADE, (b"content-length", b"100")], True, id="with-a-body-within-the-limit"),
        pytest.param("1.1", [*UPGRADE, (b"content-length", b"5000")], False, id="body-past-the-limit"),
        pytest.param("1.1", [*UPGRADE, (b"transfer-encoding", b"chunked")], False, id="chunked-body"),
        pytest.param("1.0", UPGRADE, False, id="http-1.0"),
        pytest.param("1.1", [(name, b"Upgrade" if name == b"connection" else value) for name, value in UPGRADE], False, id="settings-not-in-connection"),
        pytest.param("1.1", [*UPGRADE, (b"http2-settings", SETTINGS)], False, id="two-settings"),
        pytest.param("1.1", [(name, b"websocket" if name == b"upgrade" else value) for name, value in UPGRADE], False, id="websocket"),
        pytest.param("1.1", [(name, b"AAIAAAAC" if name == b"http2-settings" else value) for name, value in UPGRADE], False, id="push-2-invalid"),
        pytest.param("1.1", [(name, b"!!" if name == b"http2-settings" else value) for name, value in UPGRADE], False, id="not-base64"),
    ],
)
def test_an_upgrade_to_h2c_is_made_only_as_rfc_7540_describes_it(version, headers, wanted):
    assert (h2c_settings(version, headers, 4096) == SETTINGS) is wanted
