"""`seam gateway`: the agent in chat platforms (Telegram, Slack, Discord) through the one
Runtime, with nothing lost or doubled on either side of a crash (see runner.py)."""
