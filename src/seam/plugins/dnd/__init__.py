"""Quiet hours: the `DndChecker` (rules by window, weekday and zone, and an indefinite toggle)."""
