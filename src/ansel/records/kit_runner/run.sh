#!/usr/bin/env bash
# The GPU record kit's one command on the device (from the repository root there):
#   bash gpu-kit/run.sh [--deadline-s 540] [--device auto|cuda|cpu] [--jobs N] [--out DIR]
# Runs the kit's records (benchmarks, cost measurements, trainings and their evaluations) until the
# deadline, then writes one archive of what they made into --out (default $OUT). Run it again on
# the same kit and it resumes: finished runs are kept, cut ones go on from their last epoch.
set -euo pipefail
kit="$(cd "$(dirname "$0")" && pwd)"
cd "$kit"
export PYTHONPATH="$kit/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
exec "${PYTHON:-python3}" -m ansel.records.kit_runner run --kit "$kit" "$@"
