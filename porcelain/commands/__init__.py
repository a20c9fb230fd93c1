"""One module per group of ``ctx`` commands; each exports ``COMMANDS``."""
