"""The doors: the ctx command line (click) and the agents' doors.

``commands`` is the command line; ``agents`` the MCP server and the HTTP
API, ``hooks`` the agent hooks, ``install`` the wiring into agent hosts.
Each parses what it is given, calls the engine or the hub, and renders.
"""
