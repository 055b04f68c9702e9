"""HPACK for the edge's HTTP/2 (http2.py): header blocks read and written in fewer Python steps than ``hpack``'s own.

h2 decodes each request's header block and encodes each answer's with the
decoder and encoder objects it holds (``H2Connection.decoder``/``encoder``);
http2.py gives it these two, which keep ``hpack``'s interface, its header
table, its limits and its exceptions (h2 turns them into connection errors):

- :class:`RequestDecoder` reads every representation of RFC 7541 section 6
  in one loop, where ``hpack`` makes several calls and a debug log line per
  field (about a tenth of an h2c call's instructions went there);
- :class:`AnswerEncoder` leaves the dynamic table alone: a field is one index
  byte where the static table holds it whole (``:status: 200``), else a
  literal not indexed, its name indexed where the static table has it. A
  field's bytes then depend on the field only and are kept for the next
  answer. No Huffman coding either: on a loopback or mesh hop the bytes
  either would save cost more CPU than they are worth (RFC 7541 leaves both
  choices to the encoder).
- :func:`answer_fields` encodes an answer's fields straight from the
  function's ``(name, value)`` strings, and http2.py hands h2 the block as
  one :class:`EncodedFields`: h2 walks the fields it is given several times
  (with its outbound checks off it passes them to the encoder as they are),
  so one field in place of each of the answer's saves about 10,000
  instructions a field.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import hpack
from hpack.huffman_table import decode_huffman
from hpack.table import HeaderTable

#: Continuation bytes an integer may take (RFC 7541 section 5.1 lets a decoder bound it): 2**35, past any
#: index, length or table size a header block can hold.
INTEGER_SHIFT_LIMIT = 28
#: Distinct answer fields whose encoding is kept; past it the store starts again.
KNOWN_LIMIT = 1024
STATIC = HeaderTable.STATIC_TABLE_MAPPING
#: The static table by index (RFC 7541 appendix A; index 0 is no field), and the byte of its last entry's indexed field.
STATIC_FIELDS = ((b"", b""), *HeaderTable.STATIC_TABLE)
STATIC_LAST = 0x80 | len(HeaderTable.STATIC_TABLE)
#: Answer fields whose value is new in every answer (or secret): never put in HPACK's table, where
#: each would push out the fields that repeat.
UNINDEXED = frozenset({"x-request-id", "traceparent", "tracestate", "set-cookie", "date"})
#: Answer fields HTTP/2 does not carry (RFC 9113 section 8.2.2).
CONNECTION_FIELDS = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"})
#: What becomes of an answer field, by its name: sent (its bytes kept), sent never indexed, sent and
#: noted as the content-length, or dropped.
PLAIN, NEVER_INDEXED, LENGTH, DROPPED = range(4)


def read_integer(data: bytes, position: int, mask: int) -> tuple[int, int]:
    """The integer at ``position`` with a prefix of ``mask``'s bits (RFC 7541 section 5.1), and where it ends."""
    number = data[position] & mask
    position += 1
    if number < mask:
        return number, position
    shift = 0
    while True:
        if position >= len(data):
            raise hpack.HPACKDecodingError("Truncated header block")
        byte = data[position]
        position += 1
        number += (byte & 0x7F) << shift
        if byte < 0x80:
            return number, position
        shift += 7
        if shift > INTEGER_SHIFT_LIMIT:
            raise hpack.HPACKDecodingError("Integer past what a header block can hold")


def read_string(data: bytes, position: int) -> tuple[bytes, int]:
    """The string literal at ``position`` (RFC 7541 section 5.2), Huffman-decoded if it is coded, and where it ends."""
    coded = data[position] & 0x80
    length, position = read_integer(data, position, 0x7F)
    end = position + length
    if end > len(data):
        raise hpack.HPACKDecodingError("Truncated header block")
    value = data[position:end]
    return (decode_huffman(value) if coded else value), end


class RequestDecoder(hpack.Decoder):
    """``hpack.Decoder`` with its ``decode`` in one loop: the same fields, table, limits and errors."""

    def decode(self, data: bytes, raw: bool = False) -> list[Any]:
        if not raw:
            return list(super().decode(data, raw))  # h2 asks for bytes; text is hpack's own way
        table = self.header_table
        entry = table.get_by_index
        entries = table.dynamic_entries
        static = STATIC_FIELDS
        limit = self.max_header_list_size
        headers: list[Any] = []
        size = 0
        position = 0
        end = len(data)
        while position < end:
            byte = data[position]
            if byte & 0x80:  # an indexed field (section 6.1)
                if 0x80 < byte <= STATIC_LAST:  # the static table's (most fields of a request are)
                    field = static[byte & 0x7F]
                    position += 1
                elif byte != 0xFF:
                    dynamic = byte - STATIC_LAST - 1  # the dynamic table's, newest first
                    field = entries[dynamic] if 0 <= dynamic < len(entries) else entry(byte & 0x7F)  # else hpack's error
                    position += 1
                else:
                    index, position = read_integer(data, position, 0x7F)
                    field = entry(index)
            elif byte & 0x40:  # a literal added to the table (section 6.2.1)
                field, position = self.literal(data, position, 0x3F)
                table.add(field[0], field[1])
            elif byte & 0x20:  # a table size update (section 6.3): only before the first field
                if headers:
                    raise hpack.HPACKDecodingError("Table size update not at the start of the block")
                new_size, position = read_integer(data, position, 0x1F)
                if new_size > self.max_allowed_table_size:
                    raise hpack.InvalidTableSizeError("Encoder exceeded max allowable table size")
                table.maxsize = new_size
                continue
            else:  # a literal not indexed (section 6.2.2), or never to be (6.2.3)
                field, position = self.literal(data, position, 0x0F)
                if byte & 0x10:
                    field = hpack.NeverIndexedHeaderTuple(field[0], field[1])
            headers.append(field)
            size += 32 + len(field[0]) + len(field[1])
            if size > limit:
                raise hpack.OversizedHeaderListError(f"A header list larger than {limit} has been received")
        if table.maxsize > self.max_allowed_table_size:
            raise hpack.InvalidTableSizeError("Encoder did not shrink table size to within the max")
        return headers

    def literal(self, data: bytes, position: int, mask: int) -> tuple[tuple[bytes, bytes], int]:
        """A literal field: its name by index (``mask``'s prefix) or as a string, then its value."""
        index, position = read_integer(data, position, mask)
        if index:
            name = self.header_table.get_by_index(index)[0]
        else:
            name, position = read_string(data, position)
        value, position = read_string(data, position)
        return (name, value), position


def integer_bytes(number: int, bits: int, flags: int = 0) -> bytes:
    """``number`` with a ``bits``-bit prefix (RFC 7541 section 5.1), ``flags`` in the first byte's other bits."""
    top = (1 << bits) - 1
    if number < top:
        return bytes((flags | number,))
    out = [flags | top]
    number -= top
    while number >= 0x80:
        out.append((number & 0x7F) | 0x80)
        number >>= 7
    out.append(number)
    return bytes(out)


def literal_head(name: bytes, never: bool) -> bytes:
    """What comes before a literal field's value, the table untouched: its name, by index where the static table has it."""
    static = STATIC.get(name)
    flags = 0x10 if never else 0x00
    if static is not None:
        return integer_bytes(static[0], 4, flags)
    return bytes((flags,)) + integer_bytes(len(name), 7) + name


def field_bytes(name: bytes, value: bytes, never: bool) -> bytes:
    """One field, the dynamic table untouched: one index byte for a whole static entry, else a literal."""
    if not never:
        static = STATIC.get(name)
        whole = static[1].get(value) if static is not None else None
        if whole is not None:
            return integer_bytes(whole, 7, 0x80)
    return literal_head(name, never) + integer_bytes(len(value), 7) + value


#: (name, value) -> its bytes, for the fields answers repeat (content-type, :status...).
known: dict[tuple[bytes, bytes], bytes] = {}


class AnswerEncoder(hpack.Encoder):
    """``hpack.Encoder`` that never adds to the dynamic table and keeps each field's bytes; see the module."""

    def encode(self, headers: Iterable[Any], huffman: bool = False) -> bytes:
        parts = []
        if self.table_size_changes:  # the peer's SETTINGS_HEADER_TABLE_SIZE changed: said first (section 4.2)
            parts = [integer_bytes(size, 5, 0x20) for size in self.table_size_changes]
            self.table_size_changes = []
        self.header_table.resized = False
        fields = known
        for field in headers:
            if type(field) is EncodedFields:
                parts.append(field[1])
                continue
            if isinstance(field, hpack.NeverIndexedHeaderTuple):
                parts.append(field_bytes(field[0], field[1], True))
                continue
            encoded = fields.get(field)
            if encoded is None:
                if len(fields) >= KNOWN_LIMIT:
                    fields.clear()
                encoded = fields[(field[0], field[1])] = field_bytes(field[0], field[1], False)
            parts.append(encoded)
        return b"".join(parts)


class EncodedFields(hpack.HeaderTuple):
    """Fields encoded already (:func:`answer_fields`), its value their bytes: :class:`AnswerEncoder` puts them in as they are.

    A ``HeaderTuple``, so h2 hands it to the encoder as it is (it keeps the
    class of the tuples it is given); its name is empty, so h2 does not take
    it for a ``:status`` (a 1xx answer's status goes before it, as a field of
    its own).
    """

    __slots__ = ()


#: A function's answer field name -> (its name in HTTP/2, what becomes of the field, its literal's head if never indexed).
answer_names: dict[str, tuple[bytes, int, bytes]] = {}
#: (name, value) as the function wrote them -> the field's bytes, for the fields answers repeat (content-type...).
answer_known: dict[tuple[str, str], bytes] = {}


def answer_name(name: str) -> tuple[bytes, int, bytes]:
    """An answer field's name in HTTP/2 (lower-case), what becomes of the field, and the head of its literal if never indexed."""
    lower = name.lower()
    kind = DROPPED if lower in CONNECTION_FIELDS else LENGTH if lower == "content-length" else NEVER_INDEXED if lower in UNINDEXED else PLAIN
    encoded = lower.encode("latin-1")
    if len(answer_names) >= KNOWN_LIMIT:
        answer_names.clear()
    known = answer_names[name] = (encoded, kind, literal_head(encoded, True) if kind == NEVER_INDEXED else b"")
    return known


def plain_field(name: str, value: str) -> bytes:
    """A field that may be kept (not never-indexed): its bytes, kept for the next answer."""
    encoded = answer_known.get((name, value))
    if encoded is None:
        if len(answer_known) >= KNOWN_LIMIT:
            answer_known.clear()
        lower = (answer_names.get(name) or answer_name(name))[0]
        encoded = answer_known[(name, value)] = field_bytes(lower, value.encode("latin-1"), False)
    return encoded


def never_indexed_field(head: bytes, value: str) -> bytes:
    raw = value.encode("latin-1")
    return head + integer_bytes(len(raw), 7) + raw


def answer_fields(headers: Iterable[tuple[str, str]], parts: list[bytes]) -> tuple[str | None, bool]:
    """The answer's fields (latin-1 strings, as WSGI has them) encoded onto ``parts``: its content-length, and whether it has a date.

    Connection-specific fields are dropped (RFC 9113 section 8.2.2); those in
    :data:`UNINDEXED` are never indexed; the others' bytes are kept.
    """
    names = answer_names
    known = answer_known
    length = None
    dated = False
    for name, value in headers:
        lower, kind, head = names.get(name) or answer_name(name)
        if kind == PLAIN:
            parts.append(known.get((name, value)) or plain_field(name, value))
        elif kind == NEVER_INDEXED:
            parts.append(never_indexed_field(head, value))
            dated = dated or lower == b"date"
        elif kind == LENGTH:
            length = value
            parts.append(known.get((name, value)) or plain_field(name, value))
    return length, dated
