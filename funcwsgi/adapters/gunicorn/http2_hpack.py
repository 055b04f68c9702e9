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
        limit = self.max_header_list_size
        headers: list[Any] = []
        size = 0
        position = 0
        end = len(data)
        while position < end:
            byte = data[position]
            if byte & 0x80:  # an indexed field (section 6.1)
                if byte != 0xFF:
                    field = entry(byte & 0x7F)
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


def field_bytes(name: bytes, value: bytes, never: bool) -> bytes:
    """One field, the dynamic table untouched: one index byte for a whole static entry, else a literal."""
    static = STATIC.get(name)
    if static is not None and not never:
        whole = static[1].get(value)
        if whole is not None:
            return integer_bytes(whole, 7, 0x80)
    flags = 0x10 if never else 0x00
    if static is not None:
        head = integer_bytes(static[0], 4, flags)
    else:
        head = bytes((flags,)) + integer_bytes(len(name), 7) + name
    return head + integer_bytes(len(value), 7) + value


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
