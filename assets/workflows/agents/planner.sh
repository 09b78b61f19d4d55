#!/bin/sh
# Demo agent: reads its turn prompt on stdin, writes a plan into the shared
# notes through the context tools, and hands step 1 to @coder.
set -eu
prompt=$(cat)
ctx() { "${AWTUI_BIN:-awtui}" ctx "$@"; }
case "$prompt" in
  *"@planner"*) ;;
  *) echo "Nothing for me."; exit 0 ;;
esac
ctx doc append --text "# Plan
1. Parse a --shout flag in greet.sh.
2. Upper-case the greeting when it is set.
" >/dev/null
echo "Plan written to notes.md. @coder please do steps 1 and 2 of the plan."
