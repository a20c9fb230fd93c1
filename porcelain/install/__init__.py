"""Wiring ctx into agent hosts: ``ctx install``, ``ctx uninstall``, ``ctx doctor``.

Claude Code, Codex, Gemini CLI and Cursor each read their hooks and MCP
servers from settings files of their own (``hosts``). :func:`plan_install`
and :func:`plan_uninstall` work out the new text of every file first
(``settings`` merges JSON and TOML text, keeping everything else), so that
a file that cannot be read stops the whole change before anything is
written; :func:`apply_plan` then writes it, a backup first. :func:`doctor`
checks a setup. See docs/install.md. The names are listed once, in
``__init__.pyi``, and load on first use.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
