#!/bin/sh
# Demo agent: "implements" the plan by recording the change in the shared
# notes, posts progress itself, and asks @reviewer to review.
set -eu
cat >/dev/null
ctx() { "${AWTUI_BIN:-awtui}" ctx "$@"; }
plan=$(ctx doc read)
case "$plan" in
  *"--shout"*) ;;
  *) echo "@planner I found no plan in notes.md." ; exit 0 ;;
esac
ctx doc append --text "
## Change
greet.sh now takes --shout and prints the greeting in capitals.
" >/dev/null
ctx send "Implemented --shout (see notes.md). @reviewer please review." >/dev/null
