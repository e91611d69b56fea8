"""Undo: a checkpoint before each turn's first change (`turns.TurnCheckpoints`, a hook)
and taking a turn back or showing its diff (`undo.UndoService`, `Runtime.checkpoints`).
The engine behind both is any `CheckpointEngine` (contracts/checkpoints.py)."""
