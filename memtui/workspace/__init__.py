"""The agent's markdown memory: MEMORY.md and the daily logs, read and written in one place."""
