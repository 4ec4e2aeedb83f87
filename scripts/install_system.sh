#!/usr/bin/env bash
# Install the system packages AdaRoll's web environment needs: Debian's `chromium-headless-shell`
# (what WebEnv runs), `chromium` (the reference browser of the stock Selenium env and BrowserGym)
# and `chromium-driver` (the Selenium comparison in benchmarks/web_step_rate.py and the fidelity test).
# Idempotent and quiet: does nothing when both binaries are present. Needs root (CI runs as root).
set -euo pipefail

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -x /usr/lib/chromium/chromium-headless-shell ] || need+=(chromium-headless-shell)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
# util-linux provides unshare/nsenter/setsid. iproute2's `ip` raises `lo` in CRIU-restored
# branches and builds the test network of tests/envs/web/test_network_isolation.py.
command -v unshare >/dev/null 2>&1 || need+=(util-linux)
command -v ip >/dev/null 2>&1 || need+=(iproute2)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install_system.sh: need root to apt-get install ${need[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "install_system.sh: installing ${need[*]}" >&2
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
command -v chromium >/dev/null && command -v chromedriver >/dev/null \
  && [ -x /usr/lib/chromium/chromium-headless-shell ]
