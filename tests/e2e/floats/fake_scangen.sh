#!/bin/sh
# Stands in for `scangen run ...` in run_manifest's own tests: prints the file $FAKE_SCANGEN_OUTPUT.
cat "$FAKE_SCANGEN_OUTPUT"
