#!/usr/bin/env bash
# Regenerates screenshots/*.png from a real run of the offline demo: the
# real binary runs in tmux (120x40), keys are typed with send-keys, each
# screen is captured with its colours (capture-pane -e) and drawn into a PNG
# by scripts/ansi2png.py (Pillow + DejaVu Sans Mono; works offline).
#
#   apt-get install tmux fonts-dejavu-core && pip install pillow
#   scripts/screenshots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cargo build --quiet
bin="${CARGO_TARGET_DIR:-$root/target}/debug/awtui"
work=$(mktemp -d)
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
cp -r assets/workflows/demo.yaml assets/workflows/agents "$work/"
mkdir -p screenshots "$work/config"
sock="awtui-shots-$$"
cat > "$work/tmux.conf" <<'CONF'
set -g default-terminal "tmux-256color"
set -as terminal-features ",*:RGB"
CONF
t() { tmux -L "$sock" -f "$work/tmux.conf" "$@"; }
t new-session -d -s shots -x 120 -y 40 \
  "cd '$work' && XDG_CONFIG_HOME='$work/config' AWTUI_STATE_DIR='$work/state' COLORTERM=truecolor '$bin' demo.yaml"

# The pane stays when awtui leaves, so the home screen can follow it.
t set-option -t shots remain-on-exit on >/dev/null

wait_for() {
  for _ in $(seq 1 200); do
    if t capture-pane -p -t shots | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for: $1" >&2
  t capture-pane -p -t shots >&2
  exit 1
}
keys() { t send-keys -t shots "$@"; sleep 0.3; }
text() { t send-keys -t shots -l -- "$1"; sleep 0.3; }
shot() {
  sleep 0.5
  t capture-pane -e -p -t shots > "$work/$1.ans"
  python3 scripts/ansi2png.py "$work/$1.ans" "screenshots/$1.png" --cols 120 --rows 40
  echo "screenshots/$1.png"
}

# Overview: the demo ran; the user asks the planner for more.
wait_for "the review is done"
keys i; text "@pl"; keys Tab; text "please also add a --quiet flag"; keys Enter
wait_for "please also add a --quiet flag"
sleep 2
keys Escape; sleep 0.3
shot overview

# AOP blocks: select the reviewer's answer and unfold its CONTEXT block.
keys 2; keys k; keys e
shot aop-blocks

# Inbox with priorities: stop the reviewer, then three messages wait for it.
keys 1; keys j; keys j; keys s
wait_for "stopped"
keys i
text "@reviewer urgent: greet.sh fails on CI, please look first"; keys Enter
text "@reviewer when you have a minute, tidy findings/review.md"; keys Enter
text "@reviewer @coder please pair on the --quiet flag"; keys Enter
sleep 2
keys Escape; sleep 0.3
keys 1; keys j; keys j; keys 3
shot inbox

# Document editing, then a change from another editor while editing.
keys 4; keys e
wait_for "editing notes.md"
text "## Decisions"; keys Enter; text "- keep --shout and --quiet independent"; keys Enter; keys Enter
shot editing
printf '\n## Note from another editor\nRemember the README.\n' >> "$work/.workflow/demo/notes.md"
wait_for "while you edit"
shot conflict

# Leave: keep both versions, save, and detach: the instance keeps running.
keys b; keys C-s; sleep 0.5; keys Escape; sleep 0.3; keys q
wait_for "(y/d/n)"
keys d
sleep 1

# Home: every running instance, then the attention list across them.
t respawn-pane -k -t shots \
  "cd '$work' && XDG_CONFIG_HOME='$work/config' AWTUI_STATE_DIR='$work/state' COLORTERM=truecolor '$bin'"
wait_for "demo"
sleep 1
shot home
keys a
sleep 1
shot attention
keys q
sleep 1
(cd "$work" && AWTUI_STATE_DIR="$work/state" "$bin" stop --all >/dev/null 2>&1) || true

# A team (scripts/screenshots/team.yaml) in a repository: an approval card
# (the test suite's stand-in for Claude Code asks), the task board, and an
# agent's diff of its worktree.
team="$work/team"
mkdir -p "$team/bin"
cp scripts/screenshots/team.yaml scripts/screenshots/*.py "$team/"
ln -s "$root/tests/fakes/fake_agent.py" "$team/bin/claude"
printf 'import db\n' > "$team/app.py"
(cd "$team" && git init -q -b main && git add -A \
  && git -c user.name=you -c user.email=you@example.invalid commit -qm start)
t respawn-pane -k -t shots \
  "cd '$team' && PATH='$team/bin':\$PATH XDG_CONFIG_HOME='$work/config' AWTUI_STATE_DIR='$work/state' COLORTERM=truecolor '$bin' team.yaml"
wait_for "git push origin feature/login"
sleep 1
shot approval
keys y
wait_for "approval #1: allowed"
keys 5
sleep 0.5
shot tasks
keys 1; keys j; keys d
wait_for "schema.sql"
shot diff
keys Escape; sleep 0.3; keys q
wait_for "(y/d/n)"
keys y
sleep 2
