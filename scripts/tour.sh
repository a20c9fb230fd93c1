#!/usr/bin/env bash
# A five-minute tour of ctx on the default store (the user store, or the
# .ctx/ of the project you run it in). It works on a branch of its own,
# tour/<time>, so your main branch is left as it was, and a second run starts
# from main again: it never doubles the memories.
#
# Every command the tour relies on is printed before it runs, as you would
# type it (README.md shows one run), with the ids of this run.
set -euo pipefail

# Prints "$ COMMAND" as typed: an argument that the shell would split or
# expand is quoted, and an option that would pass column 72 with its value
# starts a new line.
quoted() {
  local arg=$1
  if [[ ! $arg =~ ^[A-Za-z0-9_./:@=,+%-]+$ ]]; then
    arg=${arg//\\/\\\\}
    arg=${arg//\"/\\\"}
    arg=${arg//\$/\\\$}
    arg=${arg//\`/\\\`}
    arg="\"$arg\""
  fi
  printf '%s' "$arg"
}

show() {
  local line="$" words=() arg n next last
  for arg in "$@"; do words+=("$(quoted "$arg")"); done
  for ((n = 0; n < ${#words[@]}; n++)); do
    next=${words[n]}
    if [[ $next == --* && $((n + 1)) -lt ${#words[@]} && ${words[n + 1]} != --* ]]; then
      next+=" ${words[n + 1]}"
    fi
    last=${line##*$'\n'}
    if [[ ${words[n]} == --* && $((${#last} + ${#next})) -gt 70 ]]; then
      line+=$' \\\n   '
    fi
    line+=" ${words[n]}"
  done
  printf '\n\033[1m%s\033[0m\n' "$line"
}

# Shows a command, then runs it.
say() { show "$@"; "$@"; }

# Shows a command, runs it, prints what it printed, and keeps that in $1.
keep() {
  local var=$1
  shift
  show "$@"
  local out
  out=$("$@")
  printf '%s\n' "$out"
  printf -v "$var" '%s' "$out"
}

tour="tour/$(date +%Y%m%d-%H%M%S)"
say ctx branch "$tour"
say export CTX_BRANCH="$tour" CTX_AGENT=tour

keep decision ctx remember "The job queue runs on Postgres (SKIP LOCKED), not Redis." \
  --kind decision --title "Queue backend" --tag project:api \
  --reason "one database to operate" --confidence 0.8
say ctx show "$decision"

keep port ctx remember "The API listens on port 8080 behind nginx." --title "API port"
say ctx link "$decision" "$port" --type RELATES_TO

say ctx branch "$tour-agent" --from "$tour"
say ctx edit "$decision" --branch "$tour-agent" --agent claude --confidence 0.6 \
  --body "The job queue runs on Postgres (SKIP LOCKED), not Redis.
Workers poll every 2 s." --reason "measured the poll interval"
say ctx remember "Retries back off exponentially, capped at 5 minutes." \
  --branch "$tour-agent" --agent claude --kind pattern
say ctx edit "$decision" --tag status:accepted --reason "reviewed"

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
say ctx branch -D "$tour-agent" # its work was merged, then undone

printf '\nThe tour wrote to branch %s of the store at %s.\n' "$tour" \
  "$(ctx status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["path"])')"
printf 'Remove it with: ctx branch -D %s\n' "$tour"
