#!/bin/bash
# Issue 37, CP: what is alive at the backward peak of some CP sweep runs (device-37/cp/peak_trace.py, the allocator's
# history over the last measured step). Output in $OUT.
set -uo pipefail
root=$PWD
cp device-37/cp/reference/*.py gpu_check/reference/
mkdir -p /tmp/mc && tar -xJf device-37/mcore-d98.tar.xz -C /tmp/mc
export PYTHONPATH=/tmp/mc:$root/integrations/bridge PYTHONUNBUFFERED=1
for spec in ${@:-dense-tp1-cp2:0 dense-tp1-cp2:2 dense-tp2-sp-cp2:0 dense-tp2-sp-cp2:2}; do
  shape=${spec%:*}; idx=${spec#*:}
  timeout 120 python3 device-37/cp/peak_trace.py $shape $idx > $OUT/trace-$shape-$idx.jsonl 2> $OUT/trace-$shape-$idx.err &
done
wait
for f in $OUT/trace-*.jsonl; do echo "== $f"; head -1 $f; tail -1 $f | head -c 1500; echo; tail -3 ${f%.jsonl}.err; done
cp device-37/run-cp-trace.sh device-37/cp/peak_trace.py $OUT/
