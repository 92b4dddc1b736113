#!/usr/bin/env python3
"""Publish a markdown draft to the Ghost blog as a scheduled post (needs GHOST_ADMIN_KEY)."""
import sys

if __name__ == "__main__":
    print(f"would publish {sys.argv[1:]} to Ghost", file=sys.stderr)
