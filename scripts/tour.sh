#!/usr/bin/env bash
# A five-minute tour of ctx on the default store (the user store, or the
# .ctx/ of the project you run it in). It works on a branch of its own,
# tour/<time>, so your main branch is left as it was.
set -euo pipefail

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

tour="tour/$(date +%Y%m%d-%H%M%S)"
ctx branch "$tour" >/dev/null
export CTX_BRANCH="$tour" CTX_AGENT="tour"

decision=$(ctx remember "The job queue runs on Postgres (SKIP LOCKED), not Redis." \
  --kind decision --title "Queue backend" --tag project:api \
  --reason "one database to operate" --confidence 0.8)
say ctx show "$decision"

port=$(ctx remember "The API listens on port 8080 behind nginx." --title "API port")
say ctx link "$decision" "$port" --type RELATES_TO

say ctx branch "$tour-agent" --from "$tour"
ctx edit "$decision" --branch "$tour-agent" --agent claude --confidence 0.6 \
  --body "The job queue runs on Postgres (SKIP LOCKED), not Redis.
Workers poll every 2 s." --reason "measured the poll interval" >/dev/null
ctx remember "Retries back off exponentially, capped at 5 minutes." \
  --branch "$tour-agent" --agent claude --kind pattern >/dev/null
ctx edit "$decision" --tag status:accepted --reason "reviewed" >/dev/null

say ctx diff "$tour...$tour-agent"
say ctx merge "$tour-agent" --into "$tour"
say ctx log -n 4
say ctx recall "which database backs the job queue?" --budget 200
say ctx search "postgress" -n 2
say ctx hub status
say ctx blame "$decision" --lines
say ctx undo
say ctx status
say ctx fsck

ctx branch -D "$tour-agent" >/dev/null  # its work was merged, then undone
printf '\nThe tour wrote to branch %s of the store at %s.\n' "$tour" \
  "$(ctx status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["path"])')"
printf 'Remove it with: ctx branch -D %s\n' "$tour"
