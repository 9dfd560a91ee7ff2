"""``adapters.k8s.api.api_client``: its connection pool holds a connection per thread that calls it."""

from __future__ import annotations

from pathlib import Path

import yaml

from kafka_zk_operator.adapters.k8s.api import CONNECTION_POOL_SIZE, api_client


def test_the_client_keeps_enough_connections_for_every_handler_thread(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    api = api_client(str(kubeconfig))
    assert api.configuration.host == "https://127.0.0.1:6443", "the kubeconfig's server"
    assert api.configuration.connection_pool_maxsize == CONNECTION_POOL_SIZE >= 16 + 1
    assert api.rest_client.pool_manager.connection_pool_kw["maxsize"] == CONNECTION_POOL_SIZE
