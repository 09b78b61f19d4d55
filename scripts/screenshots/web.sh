#!/usr/bin/env bash
# Regenerates screenshots/web-phone.png (390x844),
# screenshots/web-desktop.png (1280x800) and screenshots/web-live.png (one
# ACP agent's live view) from a real run: the offline demo, the fake Claude
# Code asking for approval and the scripted ACP fake, served by `awtui web`, shot
# in headless Chromium over WebDriver by tests/it/web_browser.rs
# (`screenshots_at_phone_and_desktop_sizes`).
#
#   apt-get install chromium chromium-driver
#   scripts/screenshots/web.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
AWTUI_WEB_SCREENSHOTS="$PWD/screenshots" \
  cargo test --quiet --test it web_browser::screenshots_at_phone_and_desktop_sizes
ls -l screenshots/web-phone.png screenshots/web-desktop.png screenshots/web-live.png
