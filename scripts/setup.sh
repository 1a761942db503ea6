#!/usr/bin/env bash
# Sets up (or reuses) everything shoe-ctl needs on Debian 12 / Raspberry Pi OS:
# the apt packages, a virtual environment in .venv and the project installed into it.
#   scripts/setup.sh        runtime only
#   scripts/setup.sh test   runtime plus the test tools
set -euo pipefail
cd "$(dirname "$0")/.."
want=${1:-run}
need_apt=()
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
if [ "$want" = test ]; then
    command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
    command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || need_apt+=(mosquitto mosquitto-clients)
fi
if [ ${#need_apt[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
stamp=.venv/.shoe-ctl-$want-$(sha1sum pyproject.toml | cut -c1-12)
if [ ! -f "$stamp" ]; then
    .venv/bin/python -m pip install -q --upgrade pip
    if [ "$want" = test ]; then
        .venv/bin/python -m pip install -q -e '.[test]'
    else
        .venv/bin/python -m pip install -q -e .
    fi
    touch "$stamp"
fi
