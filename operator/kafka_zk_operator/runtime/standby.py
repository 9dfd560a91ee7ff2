"""The health endpoint of a replica standing by for the leader Lease (kopf is not running yet).

It answers ``/healthz`` on the same port as kopf's liveness endpoint will, with 200 and
``{"role": "standby", "leader": "<holder>", "version": "<version>"}``, so that the standby's liveness
and readiness probes pass and a person can see which replica leads and what it runs; it stops before
kopf starts listening there (whose answer has the same ``version``: ``main.version``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from kafka_zk_operator import __version__


class StandbyHealth:
    def __init__(self, port: int, leader: Callable[[], str]) -> None:
        describe = leader

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?", 1)[0] != "/healthz":
                    self.send_error(404)
                    return
                body = json.dumps({"role": "standby", "leader": describe(), "version": __version__}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("0.0.0.0", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="kzo-standby-health", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
