#!/bin/sh
# Dealer display in kiosk mode: full screen Chromium (see docs/install-pi.md, docs/display.md).
# Started from the desktop session's autostart (labwc or wayfire on Raspberry Pi OS Bookworm).
# It opens the no-service page from the disk first: at once, before the service answers, the
# screen says NO SERVICE - DO NOT DEAL (never the browser's own error page); that page asks the
# service every second and turns into the dealer display when it answers.
URL="${SHOE_CTL_DISPLAY_URL:-http://127.0.0.1:8080/}"
HERE=$(cd "$(dirname "$0")/.." && pwd)
BOOT="file://$HERE/shoe_ctl/display/static/no-service.html#$URL"
# Raspberry Pi OS names the browser chromium-browser, Debian chromium
BROWSER=$(command -v chromium-browser || command -v chromium)
exec "$BROWSER" --kiosk --noerrdialogs --disable-infobars --no-first-run --disable-session-crashed-bubble \
    --disable-background-networking --disable-component-update --disable-sync \
    --check-for-update-interval=31536000 --password-store=basic --ozone-platform=wayland \
    --app="$BOOT"
