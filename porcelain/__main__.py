"""``python -m ctx.porcelain``: the ``ctx`` command line."""

from ctx.porcelain.launch import main

main()
