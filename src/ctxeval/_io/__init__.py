"""The edge: bytes and frames in, core columns out, and writers.

``model`` (:class:`Qrels`, :class:`Run`), ``read`` (the format registry and the duplicate rule),
``trec`` (TREC text: the rule, and its three tiers ``native``, ``columnar``, ``exact``), ``source``
(an input's text read once: files, streams, compressed data, pieces of whole lines), ``tables`` (CSV/TSV/JSONL/Parquet/frames/dicts), ``side`` (every
other file), ``ids`` (ids held in a polars column), ``frames`` (frames <-> columns), ``writers``.
polars is imported here only, and only when first used.
"""
