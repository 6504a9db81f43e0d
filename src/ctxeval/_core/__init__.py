"""The columnar core: numpy only (no dataframe library, no files, no command line).

``columns`` (a run or qrels as grouped segments, ids behind :class:`~.ids.Ids`), ``ranking`` (the one
ranking rule), ``join`` (a run against its qrels into an ``EvalData``, and pairs against pairs),
``evaldata`` (the frozen joined data, its side data seam and memo), ``extras`` (the typed side data),
``segments`` (division, offsets, blocks), ``keys`` (64-bit key matching), ``relscore`` (relative scores).
"""
