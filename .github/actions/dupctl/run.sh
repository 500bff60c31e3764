#!/usr/bin/env bash
# Runs one dupctl command as a CI check, for the GitHub Action (action.yml)
# and the GitLab template (ci/gitlab/dupctl.gitlab-ci.yml): the table in the
# log, JUnit for the test view, Markdown for the job's summary, and dupctl's
# own exit code (0 clean, 1 findings at --fail-on, 2 usage, 3 could not check).
#
#   DUPCTL_COMMAND  the command and its flags: doctor --config dupctl.yaml
#   DUPCTL_ARGS     more flags, after the ones set here (so they win)
#   DUPCTL_FAIL_ON  error, warn, info or none
#   DUPCTL_JUNIT    the JUnit file to write (default $RUNNER_TEMP/dupctl-junit.xml)
#   DUPCTL_SUMMARY  the Markdown file to write (default $GITHUB_STEP_SUMMARY)
# Words are split as a shell would, with quotes, but nothing is expanded.
set -uo pipefail

# split NAME TEXT: the words of TEXT in the array NAME. xargs honours quotes
# and expands nothing, so an input cannot run code.
split() {
  local tmp
  tmp=$(mktemp)
  if [[ $2 =~ [^[:space:]] ]] && ! printf '%s' "$2" | xargs printf '%s\0' >"$tmp"; then
    rm -f "$tmp"
    echo "dupctl: cannot split \"$2\" into words (an unmatched quote?)" >&2
    exit 2
  fi
  mapfile -d '' "$1" <"$tmp"
  rm -f "$tmp"
}
split cmd "${DUPCTL_COMMAND:-}"
split args "${DUPCTL_ARGS:-}"
if [ ${#cmd[@]} -eq 0 ]; then
  echo "dupctl: no command given (the command input, e.g. doctor --config dupctl.yaml)" >&2
  exit 2
fi
if [ "${cmd[0]}" = dupctl ]; then cmd=("${cmd[@]:1}"); fi

# The JUnit file: dupctl-junit.xml, or dupctl-junit-N.xml for the job's
# N-th dupctl step, so each step's artifact is its own.
n=1
junit=${DUPCTL_JUNIT:-}
if [ -z "$junit" ]; then
  if [ -z "${RUNNER_TEMP:-}" ]; then echo "dupctl: neither DUPCTL_JUNIT nor RUNNER_TEMP is set" >&2; exit 2; fi
  junit=$RUNNER_TEMP/dupctl-junit.xml
  while [ -e "$junit" ]; do n=$((n + 1)) && junit=$RUNNER_TEMP/dupctl-junit-$n.xml; done
fi
summary=${DUPCTL_SUMMARY:-${GITHUB_STEP_SUMMARY:-}}
if [ -z "$summary" ]; then echo "dupctl: neither DUPCTL_SUMMARY nor GITHUB_STEP_SUMMARY is set" >&2; exit 2; fi
status=0
dupctl "${cmd[@]}" --fail-on "${DUPCTL_FAIL_ON:-error}" -o "junit=$junit" -o "markdown=$summary" "${args[@]}" || status=$?

if [ -n "${GITHUB_OUTPUT:-}" ]; then
  printf 'exit-code=%s\njunit=%s\nartifact=dupctl-junit-%s-%s\n' "$status" "$junit" "${GITHUB_JOB:-job}" "$n" >>"$GITHUB_OUTPUT"
fi
exit "$status"
