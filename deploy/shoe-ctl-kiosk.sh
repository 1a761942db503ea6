#!/bin/sh
# Dealer display in kiosk mode: full screen Chromium on the service's page (see docs/install-pi.md).
# Started from the desktop session's autostart (labwc or wayfire on Raspberry Pi OS Bookworm).
URL="${SHOE_CTL_DISPLAY_URL:-http://127.0.0.1:8080/}"
# wait for the service to serve the page (it does so before dealing starts)
i=0
while [ $i -lt 120 ] && ! curl -fsS -o /dev/null "$URL"state 2>/dev/null; do
    i=$((i + 1))
    sleep 1
done
# Raspberry Pi OS names the browser chromium-browser, Debian chromium
BROWSER=$(command -v chromium-browser || command -v chromium)
exec "$BROWSER" --kiosk --noerrdialogs --disable-infobars --no-first-run --disable-session-crashed-bubble \
    --disable-background-networking --disable-component-update --disable-sync \
    --check-for-update-interval=31536000 --password-store=basic --ozone-platform=wayland \
    --app="$URL"
