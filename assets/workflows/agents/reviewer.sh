#!/bin/sh
# Demo agent: reviews the notes, records the review as a document and
# answers with AOP blocks (INTERMEDIATE, CONTEXT, FINAL) for @user. It
# takes its time (AWTUI_DEMO_PAUSE seconds a step, 1 by default) so you can
# watch.
set -eu
cat >/dev/null
ctx() { "${AWTUI_BIN:-awtui}" ctx "$@"; }
pause() { sleep "${AWTUI_DEMO_PAUSE:-1}"; }
pause
notes=$(ctx doc read)
verdict="changes requested"
case "$notes" in
  *"## Change"*) verdict="approved" ;;
esac
ctx doc write findings/review.md --text "# Review
Verdict: $verdict
" >/dev/null
pause
cat <<AOP
=== AOP-INTERMEDIATE | agent=reviewer ===
Read notes.md, checked the change against the plan.
=== END-AOP-INTERMEDIATE ===
=== AOP-CONTEXT | agent=reviewer | kind=review ===
{"files": ["notes.md", "findings/review.md"], "verdict": "$verdict", "checks": {"plan": true, "change": true}}
=== END-AOP-CONTEXT ===
=== AOP-FINAL | agent=reviewer | status=$verdict ===
The --shout change is $verdict. Notes: notes.md, review: findings/review.md.
=== END-AOP-FINAL ===
@user the review is done.
AOP
