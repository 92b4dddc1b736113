"""Keeping memory healthy: nightly maintenance, retention, the scheduler, health checks, doctor."""
