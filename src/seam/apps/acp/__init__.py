"""`seam acp`: Seam as an Agent Client Protocol agent, driven by an editor over stdio."""
