"""A Kerberos realm for the tests and the local stack: MIT's KDC (Debian ``krb5-kdc``) run from a
folder of its own, so that ZooKeeper, Kafka brokers and the operator can log in with SASL/GSSAPI.

:class:`KerberosRealm` writes a ``kdc.conf`` and a client ``krb5.conf`` into its folder, creates
the realm's database (``kdb5_util create -s``), adds principals with random keys and exports them
into keytabs (``kadmin.local addprinc -randkey`` / ``ktadd``), and runs ``krb5kdc`` in the
foreground (``-n``) on a free loopback port as a :class:`ManagedProcess`. Nothing outside the
folder is read or written: every command gets ``KRB5_CONFIG`` and ``KRB5_KDC_PROFILE``.

The client ``krb5.conf`` turns host name canonicalization off (``dns_canonicalize_hostname`` and
``rdns``), so a service is always ``<service>/<host as written>@REALM`` (``zookeeper/localhost``
for a connect string ``localhost:2181``), the same for MIT's library (the operator, through the
Python binding) and for Java (ZooKeeper, Kafka), whatever the machine's resolver says; and it
talks to the KDC over TCP only (``udp_preference_limit = 1``).

:func:`prepare` (``kzo dev prepare``) installs what this needs on a fresh Debian machine: the
Debian packages (:data:`DEBIAN_PACKAGES`, with ``apt-get`` as root) and the operator's
``kerberos`` extra (the Python bindings pure-sasl's and kafka-python's GSSAPI use, compiled
against ``libkrb5-dev``, so only after the packages) into the running virtualenv.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata, util
from pathlib import Path

from kafka_zk_operator.devstack import artifacts, debian, ports
from kafka_zk_operator.devstack.errors import StackError
from kafka_zk_operator.devstack.processes import ManagedProcess, wait_until

#: The Debian packages the realm and the Python binding need, in install order.
DEBIAN_PACKAGES = ("krb5-kdc", "krb5-admin-server", "libkrb5-dev")
#: The program each package provides that this module (or the binding's build) runs.
_PROGRAMS = {
    "krb5kdc": "krb5-kdc",
    "kdb5_util": "krb5-kdc",
    "kadmin.local": "krb5-admin-server",
    "krb5-config": "libkrb5-dev",
}
#: Debian installs the KDC's programs in /usr/sbin, which a non-root PATH may lack.
_SBIN = ("/usr/sbin", "/sbin")
#: The modules pure-sasl's (ZooKeeper) and kafka-python's (Kafka) GSSAPI mechanisms import, and
#: the extra of this project that provides them.
BINDING_MODULES = ("kerberos", "gssapi")
EXTRA = "kerberos"
DISTRIBUTION = "kafka-zk-operator"
DEFAULT_REALM = "KZO.TEST"
#: Encryption types Java 17 and MIT 1.20 both accept.
ENCTYPES = "aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal"


def program(name: str) -> str | None:
    """The path of one of the KDC's programs, or None when it is not installed."""
    return shutil.which(name) or shutil.which(name, path=os.pathsep.join(_SBIN))


def missing_packages() -> list[str]:
    """The Debian packages of :data:`DEBIAN_PACKAGES` whose program is not installed."""
    missing = {package for name, package in _PROGRAMS.items() if program(name) is None}
    return [package for package in DEBIAN_PACKAGES if package in missing]


def _log_path(name: str) -> Path:
    path = artifacts.cache_dir() / "logs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def install_debian_packages() -> list[str]:
    """Install the missing packages with ``apt-get`` (nothing when all are there); return them.

    :raises StackError: not root, no ``apt-get``, or apt failed (with the last lines of its log).
    """
    missing = missing_packages()
    debian.apt_install(
        missing,
        still_missing=missing_packages,
        needed_by="the Kerberos tests",
        skip_hint="'kzo dev prepare --no-kerberos' to leave out what only the Kerberos tests need",
        log_name="apt-kerberos.log",
    )
    return missing


def binding_installed() -> bool:
    return all(util.find_spec(module) is not None for module in BINDING_MODULES)


def _bindings() -> str:
    return " and ".join(f"'{module}'" for module in BINDING_MODULES)


def _extra_requirements() -> list[str]:
    """The requirements of this project's ``kerberos`` extra, as its installed metadata lists them."""
    try:
        requires = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        requires = []
    marker = re.compile(rf"""extra\s*==\s*["']{EXTRA}["']""")
    found = [entry.split(";", 1)[0].strip() for entry in requires if marker.search(entry)]
    if not found:
        raise StackError(
            f"{DISTRIBUTION} is not installed with its metadata here, so its [{EXTRA}] extra is "
            f"unknown; run scripts/bootstrap.sh, then this again"
        )
    return found


def install_binding() -> list[str]:
    """``pip install`` the project's ``kerberos`` extra into the running virtualenv (nothing when
    the bindings are there already); return what was installed.

    :raises StackError: not in a virtualenv, or pip failed (with the last lines of its log).
    """
    if binding_installed():
        return []
    requirements = _extra_requirements()
    if sys.prefix == sys.base_prefix:
        raise StackError(
            f"the Python Kerberos bindings ({_bindings()}) are not installed and this is no "
            f"virtualenv to install it into; run: pip install '{DISTRIBUTION}[{EXTRA}]'"
        )
    if program("krb5-config") is None:
        raise StackError("building the Python Kerberos bindings needs libkrb5-dev; install it first")
    print(f"kzo: installing {' '.join(requirements)} (built against libkrb5-dev)...", file=sys.stderr)
    log_path = _log_path("pip-kerberos.log")
    with log_path.open("w") as log:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *requirements],
            stdout=log,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0:
        tail = log_path.read_text(errors="replace").strip().splitlines()[-5:]
        raise StackError(
            f"pip could not install {' '.join(requirements)} (exit code {done.returncode}); it compiles "
            f"against libkrb5-dev with a C compiler. Last lines of {log_path}: " + " | ".join(tail)
        )
    return requirements


def prepare() -> str:
    """Install the Debian packages, then the Python binding (idempotent); one line of what is there."""
    installed = install_debian_packages()
    installed += install_binding()
    kdc = program("krb5kdc")
    return f"{kdc} and the Python bindings {_bindings()}" + (
        f" (installed now: {', '.join(installed)})" if installed else ""
    )


def require_installed() -> None:
    """:raises StackError: naming what is missing and the command that installs it."""
    missing = missing_packages()
    problems = [f"the Debian packages {', '.join(missing)}"] if missing else []
    if not binding_installed():
        problems.append(f"the Python bindings {_bindings()} ({DISTRIBUTION}[{EXTRA}])")
    if problems:
        raise StackError(
            f"Kerberos needs {' and '.join(problems)}; run 'make prepare' (kzo dev prepare) as root"
        )


@dataclass
class KerberosRealm:
    """One MIT Kerberos realm served by ``krb5kdc`` on 127.0.0.1, with everything in ``workdir``."""

    workdir: Path
    realm: str = DEFAULT_REALM
    port: int = 0
    process: ManagedProcess | None = None
    principals: list[str] = field(default_factory=list)

    @property
    def krb5_conf(self) -> Path:
        """The clients' configuration: ``KRB5_CONFIG`` for MIT, ``-Djava.security.krb5.conf`` for Java."""
        return self.workdir / "krb5.conf"

    @property
    def kdc_conf(self) -> Path:
        return self.workdir / "kdc.conf"

    @property
    def env(self) -> dict[str, str]:
        return {"KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self.kdc_conf)}

    @property
    def java_options(self) -> tuple[str, ...]:
        """JVM options that make Java's Kerberos use this realm."""
        return (f"-Djava.security.krb5.conf={self.krb5_conf}",)

    def _write_configs(self) -> None:
        db = self.workdir / "db"
        db.mkdir(parents=True, exist_ok=True)
        self.kdc_conf.write_text(
            f"[kdcdefaults]\n kdc_ports = {self.port}\n kdc_tcp_ports = {self.port}\n\n"
            f"[realms]\n {self.realm} = {{\n"
            f"  database_name = {db / 'principal'}\n"
            f"  key_stash_file = {db / 'stash'}\n"
            f"  acl_file = {db / 'kadm5.acl'}\n"
            f"  kdc_ports = {self.port}\n  kdc_tcp_ports = {self.port}\n"
            "  max_life = 10h 0m 0s\n  max_renewable_life = 1d 0h 0m 0s\n"
            f"  master_key_type = aes256-cts-hmac-sha1-96\n  supported_enctypes = {ENCTYPES}\n }}\n\n"
            "[logging]\n kdc = STDERR\n"
        )
        (db / "kadm5.acl").write_text("")
        self.krb5_conf.write_text(
            f"[libdefaults]\n default_realm = {self.realm}\n dns_lookup_kdc = false\n"
            " dns_lookup_realm = false\n dns_canonicalize_hostname = false\n rdns = false\n"
            " udp_preference_limit = 1\n ticket_lifetime = 10h\n forwardable = false\n\n"
            f"[realms]\n {self.realm} = {{\n  kdc = {ports.LOOPBACK}:{self.port}\n }}\n\n"
            f"[domain_realm]\n localhost = {self.realm}\n {ports.LOOPBACK} = {self.realm}\n"
        )

    def _run(self, what: str, argv: list[str]) -> str:
        env = {**os.environ, **self.env}
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False)
        if done.returncode != 0:
            output = " ".join((done.stderr or done.stdout).split())
            raise StackError(f"{what} failed (exit code {done.returncode}): {output}")
        return done.stdout

    def _tool(self, name: str) -> str:
        path = program(name)
        if path is None:
            require_installed()
            raise StackError(f"'{name}' is not installed; run 'make prepare'")
        return path

    def start(self) -> None:
        """Create the realm's database and start the KDC. :raises StackError: with the reason."""
        require_installed()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or ports.free_port()
        self._write_configs()
        self._run(
            "kdb5_util create",
            [self._tool("kdb5_util"), "-r", self.realm, "create", "-s", "-P", "kzo-master-key"],
        )
        self.process = ManagedProcess(
            "krb5kdc",
            [self._tool("krb5kdc"), "-n", "-r", self.realm],
            self.workdir / "krb5kdc.log",
            env=self.env,
        )
        self.process.start()
        wait_until(
            lambda: ports.port_open(self.port),
            timeout=30,
            what=f"the KDC of {self.realm} to listen on {ports.LOOPBACK}:{self.port}",
            process=self.process,
        )

    def principal(self, name: str) -> str:
        """``name`` with this realm (``zookeeper/localhost`` → ``zookeeper/localhost@KZO.TEST``)."""
        return name if "@" in name else f"{name}@{self.realm}"

    def add_principal(self, name: str, keytab: Path) -> str:
        """Add ``name`` with a random key and write that key into ``keytab``; the full principal."""
        principal = self.principal(name)
        kadmin = self._tool("kadmin.local")
        self._run(f"adding {principal}", [kadmin, "-r", self.realm, "-q", f"addprinc -randkey {principal}"])
        return self.export(principal, keytab)

    def export(self, principal: str, keytab: Path) -> str:
        """Write a new random key of ``principal`` into ``keytab`` (keytabs written before it go stale)."""
        keytab.parent.mkdir(parents=True, exist_ok=True)
        kadmin = self._tool("kadmin.local")
        self._run(
            f"exporting {principal}", [kadmin, "-r", self.realm, "-q", f"ktadd -k {keytab} {principal}"]
        )
        if not keytab.is_file():
            raise StackError(f"kadmin.local wrote no keytab {keytab} for {principal}")
        keytab.chmod(0o600)
        self.principals.append(principal)
        return principal

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
