#!/usr/bin/env bash
# Renew the Let's Encrypt certificate for app.lumen-analytics.com and reload nginx.
set -euo pipefail
ssh deploy@lumen-prod-1 "sudo certbot renew --cert-name app.lumen-analytics.com && sudo systemctl reload nginx"
