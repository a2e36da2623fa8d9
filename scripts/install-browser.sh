#!/usr/bin/env bash
# Install the system Chromium the browser tests drive: Debian's `chromium-headless-shell` (the
# tests also take the full `chromium` when that is what the machine has).
# Never `playwright install`: the tests must use the distribution's browser, not a downloaded one.
# Called by `make test` when CI=true; safe to run again (does nothing when Chromium is present).
set -euo pipefail

CHROMIUM="${SVCNB_CHROMIUM:-/usr/bin/chromium-headless-shell}"
if [ -z "${SVCNB_CHROMIUM:-}" ] && [ ! -x "$CHROMIUM" ] && [ -x /usr/bin/chromium ]; then
    CHROMIUM=/usr/bin/chromium
fi

if [ -x "$CHROMIUM" ]; then
    echo "install-browser: $CHROMIUM is present ($("$CHROMIUM" --version 2>/dev/null || echo 'version unknown'))"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-browser: $CHROMIUM is missing and apt-get is not available;" \
         "install Chromium with your system's package manager and set SVCNB_CHROMIUM to its path" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "install-browser: installing chromium needs root (or sudo); run as root:" \
             "apt-get update && apt-get install -y chromium-headless-shell" >&2
        exit 1
    fi
fi

echo "install-browser: installing Debian's chromium-headless-shell package with apt-get"
export DEBIAN_FRONTEND=noninteractive
PACKAGES=(chromium-headless-shell fonts-liberation)
# the package lists are read again (some 20 s) only when the ones the machine has cannot
# install the browser: none yet, or too old for the mirror's files
if ! $SUDO apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"; then
    $SUDO apt-get update -q
    $SUDO apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"
fi

if [ ! -x "$CHROMIUM" ]; then
    echo "install-browser: apt-get finished but $CHROMIUM is still missing" >&2
    exit 1
fi
echo "install-browser: installed $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
