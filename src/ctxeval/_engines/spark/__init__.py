"""The Spark engine: :mod:`.engine` (the provider and its plan), :mod:`.runtime` (Spark itself)."""
