#!/usr/bin/env bash
# Sets up (or reuses) everything shoe-ctl needs on Debian 12 / Raspberry Pi OS: the apt packages,
# a virtual environment in .venv and the project installed into it.
#   scripts/setup.sh        a working copy: runtime only, installed editable (the sources in place)
#   scripts/setup.sh test   the same plus the test tools
#   scripts/setup.sh pi     an installation for the service (docs/install-pi.md, e.g. /opt/shoe-ctl):
#                           the system's /usr/bin/python3 with apt's packages visible (python3-lgpio),
#                           gpiozero, and a copy of this folder's code, reinstalled on every run
#                           (updates); ends by naming the version and code installed.
# A .venv made for another folder (a copied clone) or another mode's interpreter is made anew.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(pwd -P)
want=${1:-run}
case "$want" in
    run | test | pi) ;;
    *) echo "usage: scripts/setup.sh [run|test|pi]" >&2; exit 2 ;;
esac
say() { printf 'setup: %s\n' "$*"; }

# ---- apt packages: one line per package, "mode package probe" (the probe succeeds when present)
apt_wanted() {
    cat <<'EOF'
all  python3-venv   python3 -c 'import venv, ensurepip'
test chromium       command -v chromium
test systemd        command -v systemd-analyze
test rsync          command -v rsync
test mosquitto      test -x /usr/sbin/mosquitto
test mosquitto-clients command -v mosquitto_pub
test nats-server    test -x /usr/sbin/nats-server
pi   python3-lgpio  /usr/bin/python3 -c 'import lgpio'
pi   rsync          command -v rsync
EOF
}
need_apt=()
while read -r mode pkg probe; do
    [ "$mode" = all ] || [ "$mode" = "$want" ] || continue
    bash -c "$probe" >/dev/null 2>&1 && continue
    if [ "$mode" = pi ] && ! apt-cache show "$pkg" >/dev/null 2>&1; then
        say "$pkg is not in this system's archive (Raspberry Pi OS has it); GPIO falls back to pip's lgpio"
        continue
    fi
    need_apt+=("$pkg")
done < <(apt_wanted)
if [ ${#need_apt[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    say "apt: installing ${need_apt[*]}"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# ---- the virtual environment: made for this folder, with the right interpreter
if [ "$want" = pi ]; then
    umask 022                          # the service user must read and run everything here
    base=/usr/bin/python3              # apt's python3-lgpio is built for the system's Python
    venv_opts=(--system-site-packages)
    case "$here" in
        /home/* | /root/* | /root) say "warning: $here is hidden from the service (ProtectHome=yes); install under /opt/shoe-ctl" ;;
    esac
else
    base=python3
    venv_opts=()
fi
marker=.venv/.shoe-ctl-home
if [ -d .venv ]; then
    why=""
    if [ -f "$marker" ]; then
        [ "$(cat "$marker")" = "$here" ] || why="it was made for $(cat "$marker")"
    elif ! head -n 2 .venv/bin/pip 2>/dev/null | grep -qF "$here/.venv/bin/python"; then
        why="its scripts point at another folder"
    fi
    if [ -z "$why" ] && [ "$want" = pi ]; then
        grep -qx 'include-system-site-packages = true' .venv/pyvenv.cfg 2>/dev/null \
            || why="it does not see the system's packages"
        grep -qx "home = $(dirname $base)" .venv/pyvenv.cfg 2>/dev/null \
            || why="${why:+$why; }it is not built on $base"
    fi
    if [ -n "$why" ]; then
        say ".venv: $why; making a new one"
        rm -rf .venv
    fi
fi
if [ ! -x .venv/bin/python ]; then
    say "making .venv with $base ${venv_opts[*]:-}"
    "$base" -m venv "${venv_opts[@]}" .venv
fi
printf '%s\n' "$here" >"$marker"

# ---- the project
if [ "$want" = pi ]; then
    # a copy of the code, every time: an update with the same version number installs the new code
    rm -rf build ./*.egg-info          # setuptools would reuse build/lib (files a release removed)
    say "installing shoe-ctl from $here into .venv (runtime, gpiozero)"
    .venv/bin/python -m pip install -q --upgrade pip
    # a signed release (release/release.json, docs/compliance.md) pins its dependencies' versions
    pins=()
    if [ -f release/release.json ]; then
        .venv/bin/python -I -c 'import json, sys
for name, version in json.load(open("release/release.json"))["dependencies"].items():
    if version != "absent": print(f"{name}=={version}")' >.venv/release-constraints.txt
        pins=(-c .venv/release-constraints.txt)
    fi
    .venv/bin/python -m pip install -q --upgrade "${pins[@]}" '.[pi]'
    .venv/bin/python -m pip install -q --no-deps --force-reinstall .
    rm -rf build ./*.egg-info
    # the rule profiles stay in this folder's config/ (docs/install-pi.md, "Where things live"):
    # shoe_ctl.config looks for them beside the installed package
    site=$(.venv/bin/python -I -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    ln -sfn "$here/config" "$site/config"
    .venv/bin/python -c 'import lgpio' 2>/dev/null || .venv/bin/python -m pip install -q 'lgpio>=0.2.2,<0.3' \
        || say "no lgpio for this machine: GPIO LEDs and buttons will not work (doctor says so)"
    say "installed: $(.venv/bin/python scripts/installed_code.py "$here")"
    # the signed release manifest, installed beside the code: the service checks it at every start
    share=.venv/share/shoe-ctl
    mkdir -p "$share"
    if [ -f release/release.json ] && [ -f release/release.json.sig ]; then
        cp release/release.json release/release.json.sig "$share/"
        if checked=$(cd / && "$here/.venv/bin/shoe-ctl" release verify --manifest "$here/$share/release.json" 2>&1); then
            say "release: $checked"
        else
            say "WARNING: $checked"
            say "(the service tilts at start until the installed code matches a release signed by the pinned key)"
        fi
    else
        rm -f "$share/release.json" "$share/release.json.sig"
        say "WARNING: no signed release manifest (release/release.json and .sig): the service tilts (software"
        say "mismatch) at every start unless the table's [release] verify = \"off\" (a development checkout)"
    fi
    user=${SHOE_CTL_USER:-shoe-ctl}
    if [ "$(id -u)" -eq 0 ] && id -u "$user" >/dev/null 2>&1; then
        if ! runs=$(cd / && runuser -u "$user" -- "$here/.venv/bin/shoe-ctl" --version 2>&1); then
            say "ERROR: the service user $user cannot run $here/.venv/bin/shoe-ctl: $runs"
            say "(every folder above $here must be readable and searchable by $user)"
            exit 1
        fi
        say "the service user $user runs: $runs"
    fi
else
    stamp=.venv/.shoe-ctl-$want-$(sha1sum pyproject.toml | cut -c1-12)
    if [ ! -f "$stamp" ]; then
        say "installing shoe-ctl (editable) and its dependencies into .venv; about a minute"
        .venv/bin/python -m pip install -q --upgrade pip
        if [ "$want" = test ]; then
            .venv/bin/python -m pip install -q -e '.[test]'
        else
            .venv/bin/python -m pip install -q -e .
        fi
        rm -f .venv/.shoe-ctl-"$want"-*
        touch "$stamp"
    fi
    # the code compiled to bytecode once here rather than at every start (docs/performance.md,
    # "Start-up"): the service and every command import .pyc files instead of compiling sources
    .venv/bin/python -m compileall -q -j 0 shoe_ctl drivers hil >/dev/null
    say "ready: $(.venv/bin/python scripts/installed_code.py "$here")"
fi
