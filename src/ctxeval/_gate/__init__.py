"""The regression gate: a baseline snapshot (``baseline``), the gate's one-sided tests and planning
(``stats``), and the verbs ``snapshot``, ``gate`` and ``power`` with their models (``gate``)."""
