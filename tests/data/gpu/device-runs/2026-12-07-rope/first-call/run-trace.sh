#!/bin/bash
# Issue 37: what sweep rows keep (device-37/row_trace.py: the allocator's history over the last measured
# step, a snapshot at the forward's end), SHAPE:INDEX pairs; then the sweep on the shapes given in $SWEEP, if any.
set -uo pipefail
root=$PWD
[ -d device-37/reference ] && cp device-37/reference/*.py gpu_check/reference/
mkdir -p /tmp/mc && tar -xJf device-37/mcore-d98.tar.xz -C /tmp/mc
export PYTHONPATH=/tmp/mc:$root/integrations/bridge PYTHONUNBUFFERED=1
mkdir -p $OUT/trace
for spec in ${TRACES:-rope-tp2-sp:0 rope-tp2-sp:1}; do
  shape=${spec%:*}; idx=${spec#*:}
  timeout 200 python3 device-37/row_trace.py $shape $idx > $OUT/trace/$shape-$idx.jsonl 2> /tmp/$shape-$idx.err &
done
if [ -n "${SWEEP:-}" ]; then LIMIT=200 bash device-37/run-sweep.sh "$SWEEP" > /tmp/sweep.out 2>&1; fi
wait
for f in $OUT/trace/*.jsonl; do echo "== $f"; head -2 $f; grep forward_end $f | head -25 | cut -c1-260; tail -3 /tmp/$(basename ${f%.jsonl}).err; done
cat /tmp/sweep.out 2>/dev/null | cat
