"""``devstack.kerberos``'s install steps (``kzo dev prepare``): nothing is run when everything is
there, and each reason it cannot install is one line saying what to do. The real installs ran on
this project's machines; the real KDC is in ``tests/integration/test_store_kerberos_zookeeper.py``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kafka_zk_operator.devstack import kerberos
from kafka_zk_operator.devstack.errors import StackError


def _no_commands(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError(f"ran {args}")


def test_nothing_is_installed_when_everything_is_there(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kerberos, "program", lambda name: f"/usr/sbin/{name}")
    monkeypatch.setattr(kerberos, "binding_installed", lambda: True)
    monkeypatch.setattr(subprocess, "run", _no_commands)
    assert kerberos.missing_packages() == []
    assert kerberos.prepare() == "/usr/sbin/krb5kdc and the Python bindings 'kerberos' and 'gssapi'"


def test_missing_packages_are_named_in_install_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kerberos, "program", lambda name: None if name == "kadmin.local" else "/x")
    assert kerberos.missing_packages() == ["krb5-admin-server"]
    monkeypatch.setattr(kerberos, "program", lambda name: None)
    assert kerberos.missing_packages() == ["krb5-kdc", "krb5-admin-server", "libkrb5-dev"]


def test_without_root_the_error_gives_the_command_and_the_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kerberos, "program", lambda name: None)
    monkeypatch.setattr(shutil, "which", lambda name, **_: "/usr/bin/apt-get")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(subprocess, "run", _no_commands)
    with pytest.raises(StackError) as raised:
        kerberos.install_debian_packages()
    assert str(raised.value) == (
        "the Kerberos tests need the Debian packages krb5-kdc, krb5-admin-server, libkrb5-dev; installing "
        "them needs root: run 'sudo apt-get update && sudo apt-get install -y --no-install-recommends "
        "krb5-kdc krb5-admin-server libkrb5-dev', then this again (or 'kzo dev prepare --no-kerberos' to "
        "leave out what only the Kerberos tests need)"
    )


def test_without_apt_get_the_error_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kerberos, "program", lambda name: None)
    monkeypatch.setattr(shutil, "which", lambda name, **_: None)
    with pytest.raises(StackError, match="this machine has no apt-get"):
        kerberos.install_debian_packages()


def test_the_binding_is_installed_only_into_a_virtualenv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kerberos, "binding_installed", lambda: False)
    monkeypatch.setattr(sys, "base_prefix", sys.prefix)
    monkeypatch.setattr(subprocess, "run", _no_commands)
    with pytest.raises(StackError) as raised:
        kerberos.install_binding()
    assert "no virtualenv to install it into; run: pip install 'kafka-zk-operator[kerberos]'" in str(
        raised.value
    )


def test_the_binding_comes_from_the_projects_kerberos_extra() -> None:
    assert kerberos._extra_requirements() == ["kerberos<2,>=1.3.1", "gssapi<2,>=1.9"]


def test_a_missing_kdc_fails_the_realm_with_the_command_to_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(kerberos, "program", lambda name: None)
    monkeypatch.setattr(kerberos, "binding_installed", lambda: True)
    with pytest.raises(StackError) as raised:
        kerberos.KerberosRealm(tmp_path).start()
    assert str(raised.value) == (
        "Kerberos needs the Debian packages krb5-kdc, krb5-admin-server, libkrb5-dev; run 'make prepare' "
        "(kzo dev prepare) as root"
    )
