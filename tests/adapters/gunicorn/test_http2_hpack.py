"""The edge's HPACK (funcwsgi/adapters/gunicorn/http2_hpack.py) against the ``hpack`` package it stands in for, in process.

Every block is decoded by both decoders, which must agree on the fields, on
the header table after it and on the error; every answer block must read
back through ``hpack``'s own decoder as the fields it was given, whether the
encoder or :func:`answer_fields` encoded them.
"""

from __future__ import annotations

import random

import h2.config
import h2.connection
import h2.events
import hpack
import pytest

from funcwsgi.adapters.gunicorn.http2_hpack import AnswerEncoder, EncodedFields, RequestDecoder, answer_fields, integer_bytes, read_integer

NAMES = [b":method", b":path", b":authority", b"content-type", b"user-agent", b"x-request-id", b"traceparent", b"cookie", b"x-a-rather-long-custom-name"]
VALUES = [b"", b"GET", b"/", b"/index.html", b"text/plain", b"gzip, deflate", b"v" * 200, bytes(range(0x20, 0x7F)), "é".encode()]


def random_fields(rng: random.Random) -> list[tuple[bytes, bytes]]:
    fields = []
    for _ in range(rng.randint(1, 12)):
        name, value = rng.choice(NAMES), rng.choice([*VALUES, str(rng.random()).encode()])
        fields.append(hpack.NeverIndexedHeaderTuple(name, value) if rng.random() < 0.2 else (name, value))
    return fields


def plain(fields: object) -> list[tuple[bytes, bytes, bool]]:
    """Fields as (name, value, never indexed), whatever tuple type carries them."""
    return [(bytes(name), bytes(value), isinstance(field, hpack.NeverIndexedHeaderTuple)) for field in fields for name, value in [field]]  # type: ignore[attr-defined]


def both(block: bytes, ours: RequestDecoder, theirs: hpack.Decoder) -> None:
    """Both decoders read ``block``: the same fields and table, or the same error."""
    try:
        expected = plain(theirs.decode(block, raw=True))
    except hpack.HPACKError as error:
        with pytest.raises(hpack.HPACKError) as ours_error:
            ours.decode(block, raw=True)
        assert type(ours_error.value) is type(error)
    else:
        assert plain(ours.decode(block, raw=True)) == expected
    assert list(ours.header_table.dynamic_entries) == list(theirs.header_table.dynamic_entries)
    assert ours.header_table.maxsize == theirs.header_table.maxsize


@pytest.mark.parametrize("huffman", [True, False], ids=["huffman", "plain"])
def test_the_decoder_reads_what_hpack_reads(huffman):
    rng = random.Random(7)
    encoder, ours, theirs = hpack.Encoder(), RequestDecoder(), hpack.Decoder()
    for round_ in range(300):
        if round_ % 50 == 49:  # the peer shrinks and grows its table: size updates open the next block
            size = rng.choice([0, 100, 4096])
            encoder.header_table_size = size
        both(encoder.encode(random_fields(rng), huffman=huffman), ours, theirs)


@pytest.mark.parametrize(
    "block",
    [
        pytest.param(b"\x80", id="index-0"),
        pytest.param(b"\xbf", id="index-past-the-table"),
        pytest.param(b"\xff\xff\xff\xff\xff\xff\xff\x7f", id="integer-too-long"),
        pytest.param(b"\x3f" + b"\x80" * 5 + b"\x00", id="integer-padded-with-zeros"),  # 31, in seven bytes
        pytest.param(b"\xff", id="integer-truncated"),
        pytest.param(b"\x00\x05ab", id="name-truncated"),
        pytest.param(b"\x41\x85abc", id="value-truncated"),
        pytest.param(b"\x00\x81\xff\x00", id="bad-huffman"),
        pytest.param(b"\x82\x20", id="size-update-after-a-field"),
        pytest.param(b"\x3f\xe2\x1f", id="size-update-past-the-allowed"),
    ],
)
def test_a_malformed_block_raises_what_hpack_raises(block):
    ours, theirs = RequestDecoder(), hpack.Decoder()
    with pytest.raises(hpack.HPACKError) as error:
        theirs.decode(block, raw=True)
    with pytest.raises(hpack.HPACKError) as ours_error:
        ours.decode(block, raw=True)
    assert type(ours_error.value) is type(error.value)


def test_a_header_list_past_the_limit_is_refused():
    block = hpack.Encoder().encode([(b"x-big", b"v" * 100)] * 3)
    assert len(RequestDecoder(max_header_list_size=3 * 137).decode(block, raw=True)) == 3
    with pytest.raises(hpack.OversizedHeaderListError):
        RequestDecoder(max_header_list_size=3 * 137 - 1).decode(block, raw=True)


def test_a_table_the_peer_did_not_shrink_is_refused():
    ours = RequestDecoder()
    ours.max_allowed_table_size = 100  # our SETTINGS_HEADER_TABLE_SIZE, acknowledged
    with pytest.raises(hpack.InvalidTableSizeError):
        ours.decode(b"\x82", raw=True)
    assert RequestDecoder().decode(b"\x3f" + b"\x80" * 4 + b"\x00\x82", raw=True) == [(b":method", b"GET")]  # 31, in six bytes
    assert ours.decode(b"\x3f\x45\x82", raw=True) == [(b":method", b"GET")]  # shrunk to 100 first


def test_integers_round_trip():
    for bits in (4, 5, 6, 7):
        for number in (0, 1, (1 << bits) - 2, (1 << bits) - 1, 1 << bits, 127, 128, 1337, 2**20):
            assert read_integer(integer_bytes(number, bits), 0, (1 << bits) - 1) == (number, len(integer_bytes(number, bits)))


def test_answers_read_back_as_given_and_leave_the_table_empty():
    rng = random.Random(11)
    encoder, decoder = AnswerEncoder(), hpack.Decoder()
    for _ in range(200):
        fields = [(b":status", rng.choice([b"200", b"404", b"418"])), *random_fields(rng)]
        assert plain(decoder.decode(encoder.encode(fields), raw=True)) == plain(fields)
    assert not decoder.header_table.dynamic_entries
    assert encoder.encode([(b":status", b"200")]) == b"\x88"  # a whole static entry: one byte
    assert encoder.encode([(b"content-type", b"text/plain")]) == b"\x0f\x10\x0atext/plain"  # name by index, not Huffman-coded


def test_a_table_size_change_opens_the_next_answer():
    encoder, decoder = AnswerEncoder(), hpack.Decoder()
    decoder.max_allowed_table_size = 4096
    encoder.header_table_size = 0  # the peer's SETTINGS_HEADER_TABLE_SIZE
    block = encoder.encode([(b":status", b"200")])
    assert block == b"\x20\x88"
    assert decoder.decode(block, raw=True) == [(b":status", b"200")] and decoder.header_table.maxsize == 0
    assert encoder.encode([(b":status", b"200")]) == b"\x88"  # said once


def test_answer_fields_read_back_as_the_function_wrote_them_less_the_connections_own():
    rng = random.Random(13)
    names = ["Content-Type", "content-type", "X-Request-Id", "Set-Cookie", "Date", "Content-Length", "X-Custom", "Connection", "Transfer-Encoding"]
    values = ["", "text/plain", "abc", "v" * 300, "13", "é"]
    decoder = hpack.Decoder()
    for _ in range(300):
        headers = [(rng.choice(names), rng.choice(values)) for _ in range(rng.randint(0, 8))]
        parts: list[bytes] = []
        length, dated = answer_fields(headers, parts)
        kept = [(name.lower(), value) for name, value in headers if name.lower() not in ("connection", "transfer-encoding")]
        never = {"x-request-id", "set-cookie", "date"}
        expected = [(name.encode(), value.encode("latin-1"), name in never) for name, value in kept]
        assert plain(decoder.decode(b"".join(parts), raw=True)) == expected
        lengths = [value for name, value in kept if name == "content-length"]
        assert length == (lengths[-1] if lengths else None)
        assert dated == any(name == "date" for name, _ in kept)
    assert not decoder.header_table.dynamic_entries


def test_encoded_fields_go_into_the_block_as_they_are_after_a_size_update():
    encoder = AnswerEncoder()
    parts: list[bytes] = []
    answer_fields([("Content-Type", "text/plain")], parts)
    assert encoder.encode([EncodedFields(b"", b"\x88" + parts[0])]) == b"\x88" + parts[0]
    encoder.header_table_size = 0  # the peer's SETTINGS_HEADER_TABLE_SIZE
    assert encoder.encode([(b":status", b"103"), EncodedFields(b"", parts[0])]) == b"\x20\x08\x03103" + parts[0]  # the size update, :status by its name's index


@pytest.mark.parametrize("status", [b"200", b"103"])
def test_h2_sends_encoded_fields_as_one_header_block(status):
    """h2, its outbound checks off as the edge has them, hands the encoder the field as it is: the client reads the answer's fields."""
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding=None))
    server = h2.connection.H2Connection(
        h2.config.H2Configuration(client_side=False, header_encoding=None, validate_outbound_headers=False, normalize_outbound_headers=False)
    )
    server.encoder = AnswerEncoder()
    client.initiate_connection()
    server.initiate_connection()
    server.receive_data(client.data_to_send())
    client.send_headers(1, [(b":method", b"GET"), (b":path", b"/"), (b":scheme", b"http"), (b":authority", b"t")], end_stream=True)
    server.receive_data(client.data_to_send())
    parts: list[bytes] = []
    answer_fields([("Content-Type", "text/plain"), ("X-Request-Id", "abc")], parts)
    if status == b"200":
        server.send_headers(1, [EncodedFields(b"", b"\x88" + b"".join(parts))], end_stream=True)
    else:  # an informational answer: h2 must see its :status, which goes first as a field of its own
        server.send_headers(1, [(b":status", status), EncodedFields(b"", b"".join(parts))])
    events = client.receive_data(server.data_to_send())
    (answer,) = [event for event in events if isinstance(event, (h2.events.ResponseReceived, h2.events.InformationalResponseReceived))]
    assert plain(answer.headers) == [(b":status", status, False), (b"content-type", b"text/plain", False), (b"x-request-id", b"abc", True)]
    assert any(isinstance(event, h2.events.StreamEnded) for event in events) == (status == b"200")
