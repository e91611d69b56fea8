"""The tests the floor and the dangerous patterns of `rules.py` apply to a command."""
