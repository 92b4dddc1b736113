#!/usr/bin/env bash
# Deploy a tagged release of lumen-web to lumen-prod-1 (the deploy-production flow runs this).
set -euo pipefail
tag="${1:?usage: deploy-production.sh vX.Y.Z}"
ssh deploy@lumen-prod-1 "cd /srv/lumen && git fetch --tags && git checkout $tag && ./bin/release"
