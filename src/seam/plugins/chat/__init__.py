"""Chat platform bindings (ChatAdapter implementations) and what they share: splitting a
Markdown answer at a platform's limit (`split`) and per-platform formatting."""
