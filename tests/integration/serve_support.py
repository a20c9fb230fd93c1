"""A running `ctx serve` for the tests, and a small JSON client for its API."""

from __future__ import annotations

import contextlib
import http.client
import json
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx2
from integration_support import CTX
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


@dataclass
class Served:
    """A `ctx serve` process and where it listens."""

    proc: subprocess.Popen[str]
    url: str
    key: str | None = None
    """The admin key the server made at its start (the store had none)."""

    @property
    def auth(self) -> dict[str, str]:
        """The headers that present :attr:`key`."""
        return {"Authorization": f"Bearer {self.key}"} if self.key else {}

    @property
    def mcp(self) -> str:
        return f"{self.url}/mcp"

    @contextlib.asynccontextmanager
    async def mcp_client(
        self, headers: dict[str, str] | None = None
    ) -> AsyncIterator[Client]:
        """An MCP client of the server, presenting its key (or ``headers``)."""
        sent = {**self.auth, **(headers or {})}
        async with (
            httpx2.AsyncClient(headers=sent, timeout=60) as http,
            Client(streamable_http_client(self.mcp, http_client=http)) as client,
        ):
            yield client

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
        anonymous: bool = False,
    ) -> tuple[int, Any]:
        """Sends one request; returns the status and the decoded JSON body.

        ``key`` None presents the server's own key (:attr:`key`) if it made
        one; ``anonymous`` sends no key at all.
        """
        parts = urlsplit(self.url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        sent = dict(headers or {})
        key = None if anonymous else (self.key if key is None else key)
        if key is not None and "Authorization" not in sent:
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
    key = None
    line = proc.stdout.readline()
    if line.startswith("Made admin key "):
        key = line.rsplit(": ", 1)[1].strip()
    return Served(proc, url, key)


@dataclass
class ServedStores:
    """A `ctx serve` of several stores, each under ``/s/<name>/``."""

    proc: subprocess.Popen[str]
    url: str
    stores: dict[str, str]
    """Each store's folder, by its name, as the server listed them."""
    keys: dict[str, str]
    """The admin key the server made for each store that had none, by name."""
    lines: list[str]
    """What the server printed before it answered."""

    def at(self, name: str, key: str | None = None) -> Served:
        """The server as one store's client: ``mcp_client`` reaches its MCP."""
        return Served(self.proc, f"{self.url}/s/{name}", key or self.keys.get(name))

    def request(
        self, name: str | None, method: str, path: str, body: Any = None, **kwargs: Any
    ) -> tuple[int, Any]:
        """Sends one request to a store's ``path`` (``name`` None: the root)."""
        prefix = "" if name is None else f"/s/{name}"
        server = Served(self.proc, self.url)
        return server.request(method, prefix + path, body, **kwargs)

    def stop(self) -> None:
        Served(self.proc, self.url).stop()


def start_serve_stores(
    *stores: str, env: dict[str, str] | None = None, args: tuple[str, ...] = ()
) -> ServedStores:
    """Starts `ctx serve --port 0 --store S ...` (S: PATH or NAME=PATH)."""
    proc = subprocess.Popen(
        [str(CTX), "serve", "--port", "0", *args]
        + [part for store in stores for part in ("--store", store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    lines = [proc.stdout.readline()]
    if not lines[0].startswith("Serving "):
        proc.kill()
        raise AssertionError((lines, proc.communicate()))
    url = lines[0].split(" at ", 1)[1].split(" ", 1)[0]
    served, keys = {}, {}
    while not lines[-1].startswith(("Every request", "No key")):
        lines.append(proc.stdout.readline())
        if not lines[-1]:
            proc.kill()
            raise AssertionError((lines, proc.communicate()))
        line = lines[-1].strip()
        if line.startswith("Made admin key "):
            name = line.split(" for ", 1)[1].split(" ", 1)[0]
            keys[name] = line.rsplit(": ", 1)[1]
        elif ": " in line and " (MCP " in line:
            name, rest = line.split(": ", 1)
            served[name] = rest.split(" (MCP ", 1)[0]
    return ServedStores(proc, url, served, keys, lines)
