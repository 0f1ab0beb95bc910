#!/usr/bin/env bash
# Debian's Chromium for the HTML report test (tests/workflow/test_html_report.py), as CI runs it:
#
#   ANSEL_CHROMIUM=$(tests/workflow/chromium.sh) make test
#
# Installs the package only when no chromium is on PATH (needs root and apt, like
# tests/cluster/slurm.sh), then prints the binary's path. Idempotent.
set -euo pipefail

say() { echo "chromium.sh: $*" >&2; }
die() { echo "chromium.sh: error: $*" >&2; exit 1; }

if ! command -v chromium >/dev/null; then
    [[ $EUID -eq 0 ]] || die "chromium is not installed; run as root to install Debian's package"
    command -v apt-get >/dev/null || die "chromium is not installed and apt-get is missing; install Chromium by hand"
    say "installing chromium"
    apt-get update -qq || die "apt-get update failed"
    # fonts-liberation (only recommended): without a font the screenshot's text would be boxes
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-liberation \
        >/dev/null || die "apt-get install of chromium failed"
fi
command -v chromium
