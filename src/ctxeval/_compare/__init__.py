"""Comparing systems: did the change make the system better? (``ctxeval compare``)

``compare`` (the verb), ``model`` (what it computes), ``blocks`` (one table's statistics), ``stats``
(tests, intervals, corrections), ``strata``, ``settings`` (:class:`~.settings.Stats`). Import the
submodules: this package's ``__init__`` stays empty so that the command line can read the test names
without loading the statistics.
"""
