#!/usr/bin/env bash
# Installs the pinned agent CLIs the real-CLI tests (tests/real_clis.rs) run,
# into a cache folder outside the repository: $AWTUI_CLI_CACHE, default
# ~/.cache/awtui-clis. Nothing is installed when the folder already holds
# these exact versions, so CI keeps the folder between runs.
set -euo pipefail

CACHE="${AWTUI_CLI_CACHE:-$HOME/.cache/awtui-clis}"
PACKAGES=(
  "@anthropic-ai/claude-code@2.1.330"
  "@openai/codex@0.169.0"
  "@google/gemini-cli@0.61.0"
  "opencode-ai@1.18.33"
)
STAMP="$CACHE/.awtui-pinned"
WANT="$(printf '%s\n' "${PACKAGES[@]}")"

command -v npm >/dev/null || { echo "install-clis: npm is required (node 20 or later)" >&2; exit 1; }

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  missing=""
  for bin in claude codex gemini opencode; do
    [ -x "$CACHE/node_modules/.bin/$bin" ] || missing="$missing $bin"
  done
  if [ -z "$missing" ]; then
    echo "install-clis: cached in $CACHE"
    exit 0
  fi
  echo "install-clis: cache incomplete (missing:$missing); reinstalling" >&2
fi

mkdir -p "$CACHE"
start=$(date +%s)
npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error "${PACKAGES[@]}"
for bin in claude codex gemini opencode; do
  [ -x "$CACHE/node_modules/.bin/$bin" ] || { echo "install-clis: $bin missing after install in $CACHE" >&2; exit 1; }
done
printf '%s' "$WANT" > "$STAMP"
echo "install-clis: installed into $CACHE in $(( $(date +%s) - start ))s"
