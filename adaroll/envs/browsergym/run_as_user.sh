#!/bin/sh
# Started by Playwright (as root) in place of Chromium for a BrowserGym env whose browser must not
# run as root (BrowserGymEnvConfig.user; adaroll/envs/browsergym/launch.py): hands the profile
# directory Playwright created to the browser's account, then becomes that account - no
# supplementary groups, no capabilities - and execs Chromium with Playwright's arguments
# (the same pid: Playwright's pipe descriptors and its kill on close still reach Chromium).
set -eu
: "${ADAROLL_BROWSER_UID:?}" "${ADAROLL_BROWSER_GID:?}" "${ADAROLL_CHROMIUM:?}"
profile=
for arg in "$@"; do
  case $arg in --user-data-dir=*) profile=${arg#--user-data-dir=} ;; esac
done
if [ -n "$profile" ]; then
  chown -R "$ADAROLL_BROWSER_UID:$ADAROLL_BROWSER_GID" "$profile"
fi
# HOME stays as Playwright set it: Chromium keeps its state in the profile, and a HOME the
# account cannot write only costs it the crash database (crash reporting is off anyway)
# TMPDIR: the caller's may be root's private one; Chromium's temp files (its profile lock's
# socket directory: a short path is needed) go to /tmp, writable by every account
export TMPDIR=/tmp
exec setpriv --reuid="$ADAROLL_BROWSER_UID" --regid="$ADAROLL_BROWSER_GID" --clear-groups \
  --bounding-set=-all --inh-caps=-all -- "$ADAROLL_CHROMIUM" "$@"
