#!/usr/bin/env bash
# Install the system packages AdaRoll's web environment needs: Debian's `chromium-headless-shell`
# (what WebEnv runs), `chromium` (the reference browser of the stock Selenium env and BrowserGym)
# and `chromium-driver` (the Selenium comparison in benchmarks/web_step_rate.py and the fidelity test).
# Idempotent and quiet: does nothing when both binaries are present. Needs root (CI runs as root).
set -euo pipefail

# The unprivileged account every browser runs as when AdaRoll runs as root (BrowserConfig.user;
# browsers never run as root): a system user and group, no home, no login shell.
if ! getent passwd adaroll-browser >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install_system.sh: need root to create the system user adaroll-browser" >&2
    exit 1
  fi
  useradd --system --user-group --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin adaroll-browser
fi

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -x /usr/lib/chromium/chromium-headless-shell ] || need+=(chromium-headless-shell)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
# util-linux provides unshare/nsenter/setsid. iproute2's `ip` raises `lo` in CRIU-restored
# branches and builds the test network of tests/envs/web/test_network_isolation.py.
command -v unshare >/dev/null 2>&1 || need+=(util-linux)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
# tini: the root init of an isolated browser's pid namespace, whose child drops to adaroll-browser
# (setpriv, util-linux) before exec'ing Chromium; CRIU needs a root init there (docs/web.md).
command -v tini >/dev/null 2>&1 || need+=(tini)

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
  && [ -x /usr/lib/chromium/chromium-headless-shell ] && command -v tini >/dev/null
