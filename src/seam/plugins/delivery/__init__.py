"""Delivering what the agent produced on its own time: the `Delivery` router over the
outbox, and the outbox's deliverer and senders."""
