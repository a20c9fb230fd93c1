"""The ctx command line (click): parse, call the engine, render."""
