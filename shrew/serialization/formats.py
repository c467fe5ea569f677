"""Which format a file is in, from its first bytes: a zip (torch.save's .pt), a
safetensors file (what shrew.save writes), or a bare pickle (which shrew never loads)."""
from __future__ import annotations

import pickle


def is_zip(data: bytes) -> bool:
    """A zip's local-file or (for an empty archive) end-of-directory signature."""
    return data.startswith((b"PK\x03\x04", b"PK\x05\x06"))


def is_safetensors(data: bytes) -> bool:
    """An 8-byte little-endian header length that fits in the file, then a JSON object.
    Checked before is_pickle: the length's low byte may be 0x80, pickle's first byte."""
    size = int.from_bytes(data[:8], "little")
    return len(data) >= 10 and size <= len(data) - 8 and data[8:9] == b"{"


def is_pickle(data: bytes) -> bool:
    """pickle's PROTO opcode and a protocol number: how every pickle since protocol 2
    (torch.save's legacy format, pickle.dump) starts."""
    return len(data) >= 2 and data[0] == pickle.PROTO[0] and 2 <= data[1] <= 5
