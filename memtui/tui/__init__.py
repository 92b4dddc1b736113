"""The console: a Textual app over the shared stores (open it with `memtui console`)."""
