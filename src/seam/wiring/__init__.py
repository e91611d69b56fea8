"""The composition root: the only layer that reads config files, env vars and home paths."""
