"""The user's hub: one process that answers for every store it is asked about.

- ``wire``: the protocol (requests, replies) and where the socket is.
- ``listener``: the server; ``stores``: the stores it holds open, their
  shared embedders and its memory bound.
- ``service``: the answerer of one store, which the hub shares with a
  process that answers in-process.
- ``client``: asks a running hub, and starts one in the background.
- ``routing``: where a call of :mod:`ctx.hub.api` is answered: by the
  running hub, or by an answerer in the calling process.
- ``control``: the hub as a whole: run, start later, wake, status, stop.
"""
