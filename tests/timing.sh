# Sourced by the suite's scripts (tests/run_suite.sh, tests/run_sanitized.sh, tests/run_long.sh):
# `timed NAME COMMAND...` runs COMMAND, prints how long it took, and records "NAME<TAB>SECONDS" in
# $SCANGEN_TIMINGS (a file) when it is set, for the summary at the end of the run; it returns the
# command's status. `slowest LOG N` prints the N slowest tests of a ctest log.
timed() {
  local name="$1"
  shift
  local start end status=0
  start=$(date +%s)
  "$@" || status=$?
  end=$(date +%s)
  echo "-- ${name}: $((end - start)) s$([ "$status" -eq 0 ] || echo " (failed, status $status)")"
  if [ -n "${SCANGEN_TIMINGS:-}" ]; then
    printf '%s\t%s\t%s\n' "$name" "$((end - start))" "$status" >> "$SCANGEN_TIMINGS"
  fi
  return "$status"
}

slowest() {
  grep -E 'Test +#[0-9]+: ' "$1" | sed -E 's/.*Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/' |
    sort -rn | head -n "$2" | awk '{ printf "     %7.1f s  %s\n", $1, $2 }'
}
