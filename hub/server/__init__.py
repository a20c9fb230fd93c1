"""A running hub: one process that keeps a store's indexes loaded and answers.

- ``wire``: the protocol (requests, replies) and where the socket is.
- ``service``: the server, and the answerer it shares with a process that
  answers in-process.
- ``client``: asks a running hub, and starts one in the background.
"""
