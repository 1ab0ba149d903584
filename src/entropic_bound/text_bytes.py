"""Whether bytes are text: what an own corpus (E7) and an inspection text must be."""

from __future__ import annotations


def not_text_reason(data: bytes) -> str:
    """Why ``data`` is not UTF-8/ASCII text ('' when it is): it does not decode, or more than 1 % of
    it is control characters (NULs and the like: a binary file that happens to decode)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start >= len(data) - 3:  # a read cut inside the last character
            text = data[: err.start].decode("utf-8", errors="replace")
        else:
            return f"is not UTF-8 text (byte {err.start} is not)"
    control = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\f")
    if control > len(text) // 100:
        return f"holds {control} control bytes"
    return ""
