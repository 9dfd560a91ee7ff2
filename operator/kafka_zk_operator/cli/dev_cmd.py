"""``kzo dev``: run the local stack (ZooKeeper, racked Kafka brokers, etcd + kube-apiserver), or with
``up --kraft`` a KRaft-only Kafka cluster (``devstack.kraft``: no ZooKeeper, no API server).

``up`` starts everything in the background and returns; ``status`` shows what runs and where;
``env`` prints shell exports (KUBECONFIG, KZO_ZOOKEEPER, KZO_BOOTSTRAP); ``logs`` shows log files;
``down`` stops it all. State lives in ``--state-dir`` (default ``<cache>/dev``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from kafka_zk_operator.cli.main import CliError
from kafka_zk_operator.devstack import (
    artifacts,
    demo,
    flux,
    images,
    kerberos,
    kraft,
    node,
    node_host,
    ports,
    tools,
    topicmappr,
)
from kafka_zk_operator.devstack.errors import StackError
from kafka_zk_operator.devstack.operator_process import OperatorProcess
from kafka_zk_operator.devstack.processes import pid_alive
from kafka_zk_operator.devstack.stack import LocalStack, StackSpec
from kafka_zk_operator.devstack.state_file import StackState, read_state, stop_recorded, write_state

DEFAULT_BASE_PORT = 29000


def _default_state_dir() -> Path:
    return artifacts.cache_dir() / "dev"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "dev",
        help="run the local ZooKeeper + Kafka + kube-apiserver stack",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="dev_command", metavar="ACTION", parser_class=type(parser))
    sub.required = True

    up = sub.add_parser("up", help="start the stack in the background")
    _add_state_dir(up)
    up.add_argument("--brokers", type=int, default=3, help="number of Kafka brokers (default 3)")
    up.add_argument("--racks", default="rack-a,rack-b,rack-c", help="comma-separated racks, '' for none")
    up.add_argument(
        "--zookeeper-servers",
        type=int,
        default=1,
        choices=(1, 3, 5),
        help="ZooKeeper servers: 1 (standalone, default) or a quorum of 3 or 5; brokers and the operator "
        "get the full connect string",
    )
    up.add_argument(
        "--kafka-version",
        default=artifacts.DEFAULT_KAFKA_VERSION,
        choices=(*artifacts.SUPPORTED_KAFKA_VERSIONS, *artifacts.KRAFT_ONLY_KAFKA_VERSIONS),
        help=f"Kafka line to run (default {artifacts.DEFAULT_KAFKA_VERSION}; "
        f"{', '.join(artifacts.KRAFT_ONLY_KAFKA_VERSIONS)} with --kraft only)",
    )
    up.add_argument("--no-kubernetes", action="store_true", help="skip etcd and kube-apiserver")
    up.add_argument(
        "--kraft",
        action="store_true",
        help="start a KRaft-only Kafka cluster instead (no ZooKeeper, no API server); brokers on "
        "BASE+10+id, controllers on BASE+50.. (see --kraft-controllers)",
    )
    up.add_argument(
        "--kraft-controllers",
        choices=kraft.CONTROLLER_LAYOUTS,
        default="combined",
        help="with --kraft: 'combined' (default; the first 3 brokers are also the controller quorum) or "
        "'separate' (one dedicated controller, node 3000, beside the brokers)",
    )
    up.add_argument(
        "--node",
        action="store_true",
        help="also run a real node (containerd, kubelet, controller-manager, scheduler, kube-proxy: pods "
        "run; needs root and 'kzo dev prepare --node')",
    )
    up.add_argument(
        "--base-port",
        type=int,
        default=DEFAULT_BASE_PORT,
        help=f"ZooKeeper on BASE (an ensemble: BASE..BASE+4, quorum ports BASE+40..49), brokers on "
        "BASE+10+id, etcd BASE+20/21, API server BASE+22 "
        f"(default {DEFAULT_BASE_PORT}; 0 = any free ports)",
    )
    up.add_argument(
        "--operator", action="store_true", help="also run the operator (kzo operator) against the stack"
    )
    up.add_argument(
        "--apply",
        type=Path,
        action="append",
        default=[],
        metavar="PATH",
        help="install the CRDs, then apply KafkaTopic/PartitionReassignment YAML from PATH (file or folder)",
    )
    up.set_defaults(func=_up)
    prepare = sub.add_parser("prepare", help="fetch/build every binary the stack and tests need (cached)")
    prepare.add_argument(
        "--kafka-versions",
        default=",".join((*artifacts.TESTED_KAFKA_VERSIONS, *artifacts.KRAFT_ONLY_KAFKA_VERSIONS)),
        help="comma-separated Kafka versions to fetch (default: the lines the test suite runs)",
    )
    prepare.add_argument("--no-kubernetes", action="store_true", help="skip building kube-apiserver/etcd")
    prepare.add_argument(
        "--node",
        action="store_true",
        help="also prepare the real node: containerd, runc, CNI plugins, buildah, mmdebstrap (apt-get, as "
        "root), kubelet and the control loops (Go modules), the pause, operator and spark images, and "
        "syft (make release's SBOMs)",
    )
    prepare.add_argument(
        "--no-kerberos",
        action="store_true",
        help="skip installing MIT Kerberos (Debian krb5-kdc, krb5-admin-server, libkrb5-dev: apt-get, as "
        "root) and the [kerberos] extra, which the Kerberos tests need",
    )
    prepare.set_defaults(func=_prepare)
    for name, func, text in (
        ("down", _down, "stop everything the last 'up' started"),
        ("status", _status, "show components, pids, ports"),
        ("env", _env, "print shell exports for the running stack"),
    ):
        p = sub.add_parser(name, help=text)
        _add_state_dir(p)
        if name == "status":
            p.add_argument("--json", action="store_true", help="machine-readable output")
        p.set_defaults(func=func)
    kubectl = sub.add_parser(
        "kubectl", help="run kubectl against the local API server (kubectl is fetched on first use)"
    )
    _add_state_dir(kubectl)
    kubectl.add_argument("kubectl_args", nargs=argparse.REMAINDER, help="arguments for kubectl")
    kubectl.set_defaults(func=_kubectl)
    logs = sub.add_parser("logs", help="print log file paths, or the tail of one component's log")
    _add_state_dir(logs)
    logs.add_argument("component", nargs="?", help="e.g. kafka-1, zookeeper, kube-apiserver")
    logs.add_argument(
        "-n",
        "--lines",
        type=_line_count,
        default=40,
        metavar="N",
        help="last N lines of the log (default 40)",
    )
    logs.set_defaults(func=_logs)


def _line_count(text: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"expected a non-negative number of lines, got {text!r}")
    return int(text)


def _add_state_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state-dir", type=Path, default=None, help="where state and logs live (default <cache>/dev)"
    )


def _state_dir(args: argparse.Namespace) -> Path:
    return args.state_dir if args.state_dir is not None else _default_state_dir()


def _up(args: argparse.Namespace) -> int:
    try:
        artifacts.require_assets()
    except StackError as exc:
        raise CliError(str(exc)) from exc
    if args.brokers < 1:
        raise CliError(f"--brokers must be at least 1, got {args.brokers}")
    if args.base_port < 0 or args.base_port > 65000:
        raise CliError(f"--base-port must be between 0 and 65000, got {args.base_port}")
    racks = tuple(r.strip() for r in args.racks.split(",") if r.strip())
    if args.kraft:
        return _up_kraft(args, racks)
    if args.kafka_version in artifacts.KRAFT_ONLY_KAFKA_VERSIONS:
        raise CliError(f"Kafka {args.kafka_version} has no ZooKeeper mode: add --kraft")
    spec = StackSpec(
        brokers=args.brokers,
        zookeeper_servers=args.zookeeper_servers,
        racks=racks,
        kafka_version=args.kafka_version,
        with_kubernetes=not args.no_kubernetes,
        base_port=args.base_port or None,
        with_node=args.node,
    )
    if (args.operator or args.apply or args.node) and args.no_kubernetes:
        raise CliError("--operator, --apply and --node need the API server; drop --no-kubernetes")
    state_dir = _state_dir(args)
    stack = LocalStack(spec, state_dir)
    try:
        state = stack.up()  # cleans up after itself when it fails
    except StackError as exc:
        raise CliError(str(exc)) from exc
    try:
        if args.apply:
            _install_and_apply(state, args.apply, start_operator=args.operator, base_port=args.base_port)
        elif args.operator:
            _start_operator(state, state_dir, args.base_port)
    except StackError as exc:
        stop_recorded(read_state(state_dir) or state)  # the stack this command just started
        raise CliError(f"{exc} (the stack was stopped again)") from exc
    state = read_state(state_dir) or state
    print(f"ZooKeeper:   {state.zk_connect}")
    print(f"Kafka:       {state.bootstrap_servers}")
    for broker in state.brokers:
        print(f"  broker {broker.id}: {broker.bootstrap} rack={broker.rack}")
    if state.kubeconfig:
        print(f"API server:  {state.apiserver}")
        print(f"Kubeconfig:  {state.kubeconfig}")
    if state.node_address:
        print(f"Node:        {node.NODE_NAME} (pods reach the stack on {state.node_address})")
    if "operator" in state.pids:
        print(f"Operator:    pid {state.pids['operator']}, log {state.logs['operator']}")
    print(f"Logs:        {_state_dir(args)}  (kzo dev logs)")
    print('Environment: eval "$(kzo dev env)"   Stop: kzo dev down')
    return 0


def _up_kraft(args: argparse.Namespace, racks: tuple[str, ...]) -> int:
    """``kzo dev up --kraft``: a KRaft-only cluster, recorded in the same state file ``down`` reads."""
    if args.operator or args.apply or args.node or args.zookeeper_servers != 1:
        raise CliError("--operator, --apply, --node and --zookeeper-servers do not apply to --kraft")
    if args.kafka_version not in kraft.KRAFT_KAFKA_VERSIONS:
        raise CliError(
            f"--kraft runs Kafka {', '.join(kraft.KRAFT_KAFKA_VERSIONS)}, not {args.kafka_version}"
        )
    spec = kraft.KRaftSpec(
        brokers=args.brokers,
        controllers=args.kraft_controllers,
        racks=racks,
        kafka_version=args.kafka_version,
        base_port=args.base_port or None,
    )
    try:
        stack = kraft.KRaftStack(spec, _state_dir(args))
        state = stack.up()  # stops what it started when it fails
    except StackError as exc:
        raise CliError(str(exc)) from exc
    print(f"Kafka:       {state.bootstrap_servers}  (KRaft, cluster id {stack.cluster_id})")
    for node_ in stack.nodes.values():
        if node_.broker_port is None:
            print(f"  node {node_.node_id} ({node_.roles}): {ports.LOOPBACK}:{node_.controller_port}")
        else:
            print(f"  node {node_.node_id} ({node_.roles}): {node_.bootstrap} rack={node_.rack}")
    print(f"Logs:        {_state_dir(args)}  (kzo dev logs)")
    print('Environment: eval "$(kzo dev env)"   Stop: kzo dev down')
    return 0


def _prepare(args: argparse.Namespace) -> int:
    try:
        artifacts.require_assets()
    except StackError as exc:
        raise CliError(str(exc)) from exc
    versions = [v.strip() for v in args.kafka_versions.split(",") if v.strip()]
    known = (*artifacts.SUPPORTED_KAFKA_VERSIONS, *artifacts.KRAFT_ONLY_KAFKA_VERSIONS)
    unknown = [v for v in versions if v not in known]
    if unknown:
        raise CliError(f"unsupported Kafka version(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    try:
        for version in versions:
            print(f"Kafka {version}: {artifacts.kafka_libs(version)}")
        print(f"toxiproxy: {artifacts.toxiproxy_binary()}")  # the fault suite's TCP fault injector
        print(f"topicmappr: {topicmappr.topicmappr_binary()}")  # the peer planner of peers_bench.py
        if not args.no_kerberos:  # the KDC and binding of the SASL/GSSAPI tests
            print(f"kerberos: {kerberos.prepare()}")
        if not args.no_kubernetes:
            print(f"kube-apiserver + etcd: {artifacts.k8s_bins()}")
            print(f"helm: {tools.helm_binary()}")
            print(f"flux: {flux.flux_build().folder}")  # the GitOps e2e test's controllers
            print(f"kubectl: {tools.kubectl_binary()}")
            print(f"promtool: {artifacts.promtool_binary()}")
        if args.node and not args.no_kubernetes:
            node_host.install_node_packages()
            print(f"kube-node: {artifacts.k8s_bins(node=True) / 'kube-node'}")
            print(f"coredns: {artifacts.coredns_binary()}")
            print(
                f"syft: {artifacts.syft_binary()}"
            )  # the SBOMs of make release (tests/node/test_release.py)
            built = (images.pause_image(), images.project_image("runtime"), images.project_image("spark"))
            for image in built:
                print(f"image {image.reference}: {image.archive} ({image.size_bytes / 1e6:.0f} MB)")
    except StackError as exc:
        raise CliError(str(exc)) from exc
    return 0


def _start_operator(state: StackState, state_dir: Path, base_port: int) -> None:
    assert state.kubeconfig is not None
    operator = OperatorProcess(
        kubeconfig=Path(state.kubeconfig),
        zk_connect=state.zk_connect,
        log_path=state_dir / "operator" / "operator.log",
        metrics_port=base_port + 30 if base_port else None,
        health_port=base_port + 31 if base_port else None,
        extra_env={"KZO_RESYNC_SECONDS": "30"},
        detach=True,
    )
    print("kzo: starting the operator ...", file=sys.stderr)
    operator.start()
    assert operator.pid is not None
    state.pids["operator"] = operator.pid
    state.logs["operator"] = str(operator.log_path)
    write_state(state_dir, state)
    print(f"kzo: operator metrics on http://127.0.0.1:{operator.metrics_port}/metrics", file=sys.stderr)


def _install_and_apply(state: StackState, paths: list[Path], *, start_operator: bool, base_port: int) -> None:
    assert state.kubeconfig is not None
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(path.glob("*.yaml"))
        elif path.is_file():
            files.append(path)
        else:
            raise StackError(f"--apply {path}: no such file or folder")
    api = demo.api_client(Path(state.kubeconfig))
    crd_dir = _crd_dir()
    print(f"kzo: installing CRDs from {crd_dir} ...", file=sys.stderr)
    demo.install_crds(api, crd_dir)
    if start_operator:
        _start_operator(state, _state_dir_of(state), base_port)
    applied = demo.apply_manifests(api, files)
    print(f"kzo: applied {len(applied)} resources; waiting for KafkaTopics to be Ready ...", file=sys.stderr)
    if start_operator:
        demo.wait_topics(api, applied)
    print()
    print(demo.topic_table(api))
    print()


def _crd_dir() -> Path:
    """crds/ of the source checkout (the package is installed editable from it)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "crds" / "kafkatopics.yaml").exists():
            return parent / "crds"
    raise StackError("cannot find the crds/ folder next to the package; run from a source checkout")


def _state_dir_of(state: StackState) -> Path:
    return Path(state.logs["zookeeper"]).parent.parent


def _load(args: argparse.Namespace) -> Any:
    try:
        state = read_state(_state_dir(args))
    except StackError as exc:
        raise CliError(str(exc)) from exc
    if state is None:
        raise CliError(f"no stack state in {_state_dir(args)}; start one with 'kzo dev up'")
    return state


def _down(args: argparse.Namespace) -> int:
    state = _load(args)
    stopped = stop_recorded(state)
    print("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))
    return 0


def _status(args: argparse.Namespace) -> int:
    state = _load(args)
    rows = {name: {"pid": pid, "running": pid_alive(pid)} for name, pid in state.pids.items()}
    if args.json:
        print(
            json.dumps(
                {
                    "zookeeper": None if kraft.is_kraft_state(state) else state.zk_connect,
                    "bootstrap": state.bootstrap_servers,
                    "apiserver": state.apiserver,
                    "kubeconfig": state.kubeconfig,
                    "processes": rows,
                },
                indent=2,
            )
        )
        return 0
    print(f"{'COMPONENT':<16} {'PID':>8}  STATE")
    for name, row in rows.items():
        print(f"{name:<16} {row['pid']:>8}  {'running' if row['running'] else 'stopped'}")
    zookeeper = "" if kraft.is_kraft_state(state) else f"ZooKeeper {state.zk_connect}   "
    print(f"\n{zookeeper}Kafka {state.bootstrap_servers}")
    if state.apiserver:
        print(f"API server {state.apiserver}   KUBECONFIG={state.kubeconfig}")
    return 0 if all(row["running"] for row in rows.values()) else 1


def _env(args: argparse.Namespace) -> int:
    state = _load(args)
    if state.kubeconfig:
        print(f"export KUBECONFIG={state.kubeconfig}")
    if not kraft.is_kraft_state(state):
        print(f"export KZO_ZOOKEEPER={state.zk_connect}")
    print(f"export KZO_BOOTSTRAP={state.bootstrap_servers}")
    return 0


def _kubectl(args: argparse.Namespace) -> int:
    state = _load(args)
    if not state.kubeconfig:
        raise CliError("this stack runs without an API server (started with --no-kubernetes)")
    try:
        binary = tools.kubectl_binary()
    except StackError as exc:
        raise CliError(str(exc)) from exc
    env = dict(os.environ, KUBECONFIG=state.kubeconfig)
    return subprocess.call([str(binary), *args.kubectl_args], env=env)


def _logs(args: argparse.Namespace) -> int:
    state = _load(args)
    if args.component is None:
        for name, path in state.logs.items():
            print(f"{name:<16} {path}")
        return 0
    path = state.logs.get(args.component)
    if path is None:
        raise CliError(f"unknown component {args.component!r}; one of: {', '.join(state.logs)}")
    lines = Path(path).read_text(errors="replace").splitlines()
    if args.lines:  # lines[-0:] would be every line
        print("\n".join(lines[-args.lines :]))
    return 0
