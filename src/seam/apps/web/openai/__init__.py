"""The OpenAI-compatible API (`/v1`), so any OpenAI client drives Seam: `routes.py` has
the routes, `docs/openai-api.md` the whole contract."""
