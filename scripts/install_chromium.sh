#!/usr/bin/env bash
# Installs Debian's headless-capable Chromium for the dashboard tests (tests/test_compare*.py).
# Idempotent and quiet: does nothing when a chromium binary is already on PATH. Needs root (or
# passwordless sudo) and the Debian apt mirrors; exits non-zero with a one-line reason otherwise,
# and the tests then skip the browser check with that reason.
set -euo pipefail
for bin in chromium chromium-browser; do
  if command -v "$bin" >/dev/null 2>&1; then
    exit 0
  fi
done
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  echo "install_chromium.sh: need root or passwordless sudo to run apt-get" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_chromium.sh: apt-get not found (not a Debian/Ubuntu system)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# Quiet on success; on failure, show apt's last lines so the reason is visible.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium; } >"$log" 2>&1; then
  tail -n 5 "$log" >&2
  echo "install_chromium.sh: apt-get install chromium failed" >&2
  exit 1
fi
command -v chromium >/dev/null 2>&1
