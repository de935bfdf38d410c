#!/usr/bin/env python3
"""The rank a fake-process-group run plays (gpu_check/reference/fake_group.py), checked against Megatron Core's
rank layout without PyTorch: the default order tp-cp-ep-dp-pp (parallel_state.initialize_model_parallel, `order`),
pipeline outermost, so stage s starts at global rank s * (tp * cp * dp) and its tensor/expert/data rank 0 is that
first rank; the world is the smallest that holds both the dense (tp * cp * dp) and expert (etp * ep * edp) layouts.
Usage: test_fake_group.py (exit 1 on a failed check)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "gpu_check", "reference"))
import fake_group  # noqa: E402

FAILED = []


def check(what, got, expected):
    if got != expected:
        FAILED.append("{}: got {}, expected {}".format(what, got, expected))


def shape(tp=1, cp=1, ep=1, etp=1, pp=1, stage=0, sp=False):
    return {"tp": tp, "cp": cp, "ep": ep, "etp": etp, "pp": pp, "stage": stage, "sp": sp}


# Dense: a world of tp * cp per stage, one data-parallel replica.
check("TP 2", fake_group.world_and_rank(shape(tp=2)), (2, 0))
check("TP 4 PP 4 stage 1", fake_group.world_and_rank(shape(tp=4, pp=4, stage=1)), (16, 4))
check("TP 2 CP 2 PP 2 stage 1", fake_group.world_and_rank(shape(tp=2, cp=2, pp=2, stage=1)), (8, 4))
# Expert parallelism: EP 8 with TP 1 needs 8 data-parallel ranks per stage; TP 2 with EP 4 (ETP 2) needs 8 too.
check("EP 8", fake_group.world_and_rank(shape(ep=8)), (8, 0))
check("TP 2 EP 4 ETP 2", fake_group.world_and_rank(shape(tp=2, ep=4, etp=2)), (8, 0))
check("TP 2 EP 4 ETP 1", fake_group.world_and_rank(shape(tp=2, ep=4)), (4, 0))
check("EP 8 PP 2 stage 1", fake_group.world_and_rank(shape(ep=8, pp=2, stage=1)), (16, 8))
# One rank needs no group of its own.
check("one rank needs no fake group", fake_group.needed(shape()), False)
check("TP 2 needs a fake group", fake_group.needed(shape(tp=2)), True)
check("no parallel section", fake_group.needed(None), False)
# The input's sequence rows: split over CP, and over TP only under sequence parallelism.
check("rows, TP 2 without SP", fake_group.local_rows(shape(tp=2), 4096), 4096)
check("rows, TP 2 with SP", fake_group.local_rows(shape(tp=2, sp=True), 4096), 2048)
check("rows, TP 4 SP CP 2", fake_group.local_rows(shape(tp=4, cp=2, sp=True), 8192), 1024)
check("rows, no parallel section", fake_group.local_rows({}, 4096), 4096)

for f in FAILED:
    print("FAILED", f)
print("{} checks failed".format(len(FAILED)) if FAILED else "all checks passed")
sys.exit(1 if FAILED else 0)
