"""`seam serve`: the HTTP API, its event streams, the OpenAI-compatible endpoint and the page."""
