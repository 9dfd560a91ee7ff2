"""Byte sizes as people write them: ``500GiB``, ``2 TiB``, ``750GB``, ``1073741824``; and back.

Units follow their names: ``KiB MiB GiB TiB PiB`` (and Kubernetes' ``Ki Mi Gi Ti Pi``) are binary,
powers of 1024; ``KB MB GB TB PB`` are decimal, powers of 1000; ``B`` or no unit is bytes. Units
are case-insensitive. A bare ``K``/``M``/``G``/``T``/``P`` is refused: it means 1000 to some tools
and 1024 to others. The number may have a fraction (``1.5TiB``); the result is rounded down to whole
bytes. :func:`format_size` writes binary units with one decimal (``1.2 TiB``), as the summaries do.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from kafka_zk_operator.domain import errors

#: Largest size accepted (4 EiB); snapshot sizes add up to at most 2**62 bytes too.
MAX_SIZE = 2**62

_UNITS = {
    "": 1,
    "b": 1,
    **{f"{p}b": 1000 ** (i + 1) for i, p in enumerate("kmgtp")},
    **{f"{p}ib": 1024 ** (i + 1) for i, p in enumerate("kmgtp")},
    **{f"{p}i": 1024 ** (i + 1) for i, p in enumerate("kmgtp")},
}
_SIZE = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)")
_BINARY = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def parse_size(text: str) -> int:
    """Bytes in ``text`` (module docstring); :class:`InvalidSpec` naming the problem otherwise."""
    match = _SIZE.fullmatch(text.strip().lower())
    if match is None:
        raise errors.InvalidSpec(
            f"invalid size {text!r}: expected a number and a unit, e.g. 500GiB, 2TiB or 750GB"
        )
    number, unit = match.groups()
    if unit in ("k", "m", "g", "t", "p"):
        upper = unit.upper()
        raise errors.InvalidSpec(
            f"ambiguous size {text!r}: write {upper}iB (powers of 1024) or {upper}B (powers of 1000)"
        )
    if unit not in _UNITS:
        raise errors.InvalidSpec(f"invalid size {text!r}: unknown unit {unit!r} (B, KB..PB, KiB..PiB)")
    try:
        value = int(Decimal(number) * _UNITS[unit])
    except InvalidOperation:  # pragma: no cover - the pattern only lets decimal numbers through
        raise errors.InvalidSpec(f"invalid size {text!r}") from None
    if not 0 < value <= MAX_SIZE:
        raise errors.InvalidSpec(f"invalid size {text!r}: must be at least 1 byte and at most 4 EiB")
    return value


def format_size(n_bytes: int) -> str:
    """``n_bytes`` in binary units, one decimal (``512 B``, ``1.5 KiB``, ``1.2 TiB``)."""
    value = float(n_bytes)
    for unit in _BINARY:
        if abs(value) < 1024 or unit == _BINARY[-1]:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def format_percent(part: int, whole: int) -> str:
    """``part`` as a percentage of ``whole`` (> 0), never shown as exactly 100 % unless it is."""
    share = 100 * part / whole
    for digits in range(3):
        text = f"{share:.{digits}f}"
        if part == whole or float(text) != 100:
            return f"{text}%"
    return f"{share:.3f}%"
