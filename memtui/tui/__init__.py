"""The console: a Textual app over the shared stores (``memtui console``)."""
