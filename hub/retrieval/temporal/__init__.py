"""Time in questions and in memories: what a query means in time, and gravity.

- ``parse``: a query's time phrases to windows, cycles and relations.
- ``rules``: the vocabulary, and one rule per kind of phrase.
- ``calendar``: windows, cycles, holidays and date arithmetic.
- ``gravity``: how close a memory's dates are to what the query names.
- ``moment``: what a time option names (``--when``, ``--at``, ``--now``).
"""
