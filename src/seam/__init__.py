"""Seam: a runtime for personal AI agents.

Kept import-free so `seam --version` and `import seam` stay fast.
"""

__version__ = "0.3.0"
