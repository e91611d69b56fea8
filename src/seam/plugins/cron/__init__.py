"""Cron jobs: schedules (croniter + zoneinfo) and the scheduler that runs them."""
