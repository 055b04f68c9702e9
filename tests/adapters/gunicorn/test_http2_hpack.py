"""The edge's HPACK (funcwsgi/adapters/gunicorn/http2_hpack.py) against the ``hpack`` package it stands in for, in process.

Every block is decoded by both decoders, which must agree on the fields, on
the header table after it and on the error; every answer block must read
back through ``hpack``'s own decoder as the fields it was given.
"""

from __future__ import annotations

import random

import hpack
import pytest

from funcwsgi.adapters.gunicorn.http2_hpack import AnswerEncoder, RequestDecoder, integer_bytes, read_integer

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
