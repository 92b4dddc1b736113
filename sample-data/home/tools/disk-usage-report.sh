#!/usr/bin/env bash
# The ten largest folders under /var and /srv on a host, for the clean-disk-space flow.
set -euo pipefail
ssh deploy@"${1:-lumen-prod-1}" "sudo du -xh /var /srv 2>/dev/null | sort -rh | head -10"
