#!/usr/bin/env bash
# Show the SQL a Django migration would run, without running it.
set -euo pipefail
ssh deploy@"${1:-lumen-staging-1}" "cd /srv/lumen && ./venv/bin/python manage.py migrate --plan"
