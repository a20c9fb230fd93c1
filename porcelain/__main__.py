"""``python -m ctx.porcelain``: the ``ctx`` command line."""

from ctx.porcelain.main import main

main()
