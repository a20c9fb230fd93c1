"""A running `ctx serve` for the tests, and a small JSON client for its API."""

from __future__ import annotations

import http.client
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from integration_support import CTX


@dataclass
class Served:
    """A `ctx serve` process and where it listens."""

    proc: subprocess.Popen[str]
    url: str

    @property
    def mcp(self) -> str:
        return f"{self.url}/mcp"

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        key: str | None = None,
        query: dict[str, Any] | None = None,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        """Sends one request; returns the status and the decoded JSON body."""
        parts = urlsplit(self.url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        sent = dict(headers or {})
        if key is not None:
            sent["Authorization"] = f"Bearer {key}"
        data = (
            raw
            if raw is not None
            else (None if body is None else json.dumps(body).encode())
        )
        if data is not None:
            sent.setdefault("Content-Type", "application/json")
        target = path + ("?" + urlencode(query, doseq=True) if query else "")
        if "Host" in sent:
            conn.putrequest(method, target, skip_host=True)
            for name, value in {
                **sent,
                "Content-Length": str(len(data or b"")),
            }.items():
                conn.putheader(name, value)
            conn.endheaders(data)
        else:
            conn.request(method, target, body=data, headers=sent)
        response = conn.getresponse()
        payload = response.read()
        conn.close()
        return response.status, json.loads(payload) if payload else None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.communicate()


def start_serve(store: Path, *args: str, env: dict[str, str] | None = None) -> Served:
    """Starts `ctx serve --port 0` on a store; returns once it listens."""
    proc = subprocess.Popen(
        [str(CTX), "--store", str(store), "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("Serving "):
        proc.kill()
        raise AssertionError((line, proc.communicate()))
    url = line.split(" at ", 1)[1].split(" ", 1)[0]
    return Served(proc, url)
