"""What Seam ships for people who test against it, chiefly backend authors.

`seam.testing.conformance` holds the store conformance suites: one per store protocol in
`seam.contracts`, each a class of pytest tests a backend's test module subclasses. They
need pytest and pytest-asyncio (`pip install seam[testing]`); nothing in Seam imports
this package, so the runtime never does.
"""
