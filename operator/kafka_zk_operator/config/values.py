"""How the settings code reads files and shows the values a user gave in its one-line errors."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

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


# --- reading one key of a clusters-file section (``where``: the section, e.g. ``clusters[0].tls``)


def secret_file(section: Mapping[Any, Any], key: str, where: str) -> str | None:
    """The stripped text of the file ``section[key]`` names (a mounted Secret), or None."""
    path = section.get(key)
    what = f"{where}.{key}"
    if path is None:
        return None
    if not isinstance(path, str) or not path.strip():
        raise SettingsError(f"{what} must be the path of a file (a string), got {kind_of(path)}")
    text = read_file(path, what)
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()  # as text-mode reading did


def optional_str(section: Mapping[Any, Any], key: str, where: str) -> str | None:
    """``section[key]``: a string or None."""
    value = section.get(key)
    if value is None or isinstance(value, str):
        return value
    raise SettingsError(f"{where}.{key} must be a string, got {kind_of(value)}; quote it in the YAML")


def subsection(raw: Mapping[Any, Any], key: str, where: str) -> Mapping[Any, Any] | None:
    """``raw[key]``: a mapping (a nested section) or None."""
    value = raw.get(key)
    if value is None or isinstance(value, Mapping):
        return value
    raise SettingsError(f"{where}.{key} must be a mapping of {key} settings, got {kind_of(value)}")


def flag(raw: Mapping[Any, Any], key: str, where: str, default: bool) -> bool:
    """``raw[key]``: true or false, ``default`` when absent."""
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    raise SettingsError(f"{where}.{key} must be true or false (unquoted), got {kind_of(value)}")


#: The first two bytes of an MIT keytab file (format version 0x0502; 0x0501 is the old one).
KEYTAB_MAGIC = (b"\x05\x02", b"\x05\x01")


def keytab_file(section: Mapping[Any, Any], where: str) -> str | None:
    """The ``keytab`` path, checked to be a readable MIT keytab (None when absent)."""
    path = section.get("keytab")
    what = f"{where}.keytab"
    if path is None:
        return None
    if not isinstance(path, str) or not path.strip():
        raise SettingsError(f"{what} must be the path of a keytab file (a string), got {kind_of(path)}")
    head = read_bytes(path, what, "the keytab is mounted and readable by the operator's user")[:2]
    if head not in KEYTAB_MAGIC:
        raise SettingsError(
            f"{what}: {plain(path)} is not a Kerberos keytab (a keytab file starts with the bytes "
            "05 02); export the principal's key with kadmin's 'ktadd -k FILE PRINCIPAL'"
        )
    return path


def kerberos_principal(section: Mapping[Any, Any], where: str, example: str) -> str:
    """The ``principal`` the operator logs in as: non-empty, no spaces (``example``: one to show)."""
    principal = (optional_str(section, "principal", where) or "").strip()
    if not principal or any(char.isspace() for char in principal):
        raise SettingsError(
            f"{where}: GSSAPI needs principal, the Kerberos principal the operator logs in as, without "
            f"spaces (e.g. {example}), got {show(section.get('principal'))}"
        )
    return principal
