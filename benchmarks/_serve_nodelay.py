"""``ctx serve`` with TCP_NODELAY on its connections: an experiment, not ctx.

``ctx serve`` binds its listening socket itself (``hub/agents/serve.py``,
``_bind``) as ``socket.socket(family, SOCK_STREAM)``, whose ``proto`` is 0.
asyncio sets TCP_NODELAY only on sockets whose ``proto`` is
``IPPROTO_TCP`` (``asyncio.base_events._set_nodelay``), so the accepted
connections keep Nagle's algorithm: a response written in two parts waits
for the client's delayed ACK (40 ms on Linux) whenever requests follow each
other closely. bench_agents.py runs this script beside ``ctx serve`` to show
what the server costs without that wait; it replaces ``_bind`` with the same
function making the socket with ``IPPROTO_TCP``, then runs the ``ctx``
command line as usual.
"""

from __future__ import annotations

import socket
import sys

import ctx.hub.agents.serve as serve
from ctx.porcelain.main import main


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


if __name__ == "__main__":
    serve._bind = _bind
    sys.argv[0] = "ctx"
    sys.exit(main())
