"""Agent integrations: Claude Code hooks (settings and events); OpenClaw is read as a source."""
