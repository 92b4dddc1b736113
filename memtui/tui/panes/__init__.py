"""The overview's five panes, one module each, sharing a small base class."""
