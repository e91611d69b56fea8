"""Recall by meaning: local embeddings (`embedder.py`) for memory and session search."""
