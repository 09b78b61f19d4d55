#!/bin/sh
# Demo agent: reads its turn prompt on stdin, writes a plan into the shared
# notes through the context tools, and hands step 1 to @coder. It takes its
# time (AWTUI_DEMO_PAUSE seconds a step, 1 by default) so you can watch.
set -eu
prompt=$(cat)
ctx() { "${AWTUI_BIN:-awtui}" ctx "$@"; }
pause() { sleep "${AWTUI_DEMO_PAUSE:-1}"; }
case "$prompt" in
  *"@planner"*) ;;
  *) echo "Nothing for me."; exit 0 ;;
esac
pause
# The plan is written once: a second turn does not add a second copy.
case "$(ctx doc read)" in
  *"# Plan"*) ;;
  *) ctx doc append --text "# Plan
1. Parse a --shout flag in greet.sh.
2. Upper-case the greeting when it is set.
" >/dev/null ;;
esac
pause
echo "Plan written to notes.md. @coder please do steps 1 and 2 of the plan."
