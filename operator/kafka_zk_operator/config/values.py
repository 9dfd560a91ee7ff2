"""How the settings code reads files and shows the values a user gave in its one-line errors."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from kafka_zk_operator.config.settings import SettingsError


def show(value: object, limit: int = 80) -> str:
    """``repr`` of a user-supplied value, shortened: always one line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def plain(text: str) -> str:
    """A path or name as is when printable (one line), else its ``repr``."""
    return text if text.isprintable() else show(text)


def kind_of(value: object) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, bool):
        return f"the boolean {value!r}"
    if isinstance(value, str):
        return f"the string {show(value)}"
    if isinstance(value, int | float):
        return f"the number {show(value)}"
    return f"a {type(value).__name__}"


def one_line(text: str) -> str:
    return " ".join(text.split())


def utf8(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(
            f"{what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); save it as UTF-8"
        ) from exc


def read_bytes(path: str, what: str, check: str = "the file is mounted and readable") -> bytes:
    """The bytes of ``path``. :raises SettingsError: unreadable (``check``: what to check then)."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        reason = exc.strerror or one_line(str(exc))
        raise SettingsError(
            f"{what}: cannot read {plain(path)}: {reason}; check the path and that {check}"
        ) from exc
    except ValueError as exc:  # e.g. an embedded NUL character
        raise SettingsError(f"{what}: {show(path)} is not a usable file path ({exc})") from exc


def read_file(path: str, what: str) -> str:
    """The text of ``path`` (UTF-8). :raises SettingsError: unreadable or not UTF-8."""
    return utf8(read_bytes(path, what), f"{what}: {plain(path)}")
