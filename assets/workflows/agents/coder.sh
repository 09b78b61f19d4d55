#!/bin/sh
# Demo agent: "implements" the plan by recording the change in the shared
# notes, posts progress itself, and asks @reviewer to review. It takes its
# time (AWTUI_DEMO_PAUSE seconds a step, 1 by default) so you can watch.
set -eu
cat >/dev/null
ctx() { "${AWTUI_BIN:-awtui}" ctx "$@"; }
pause() { sleep "${AWTUI_DEMO_PAUSE:-1}"; }
plan=$(ctx doc read)
case "$plan" in
  *"--shout"*) ;;
  *) echo "@planner I found no plan in notes.md." ; exit 0 ;;
esac
pause
# The change is recorded once: a second turn does not add a second copy.
case "$plan" in
  *"## Change"*) ;;
  *) ctx doc append --text "
## Change
greet.sh now takes --shout and prints the greeting in capitals.
" >/dev/null ;;
esac
pause
ctx send "Implemented --shout (see notes.md). @reviewer please review." >/dev/null
