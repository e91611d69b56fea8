"""Agent Skills: `SKILL.md` folders (agentskills.io format), offered by progressive
disclosure: an index in the system prompt, the body and files through `skill_view`."""
