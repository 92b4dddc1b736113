"""Extraction: secret redaction, the capture policy, and turning transcript turns into memory."""
