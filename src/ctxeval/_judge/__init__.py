"""The LLM judge: prompts (tasks), the clients (an OpenAI-compatible one and the lexical heuristic),
the SQLite cache, the runner (concurrency, retries, budget, votes), the labels it writes and the
agreement statistics that say how far to trust them."""
