"""Engines: where per-query values are computed, providers under the session (see :mod:`.base`):
:mod:`.local` (the default), :mod:`.stream` (run files read in chunks of whole queries) and
:mod:`.spark` (on Spark); what a verb's block function returns and how blocks merge: :mod:`.blocks`."""
