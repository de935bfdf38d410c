"""GPU test of the helper's measurement core with a real PyTorch model and torch.utils.checkpoint.

Checks, on a stack of MLP blocks with known tensor sizes: retained memory without checkpointing equals the sum of the
tensors autograd keeps; with every block checkpointed only the block inputs (and the output) stay; the gradients are
bit-identical; and the exit report of a child process lands in the directory. Run: python3 test_measure_torch.py
(exits 77 without a GPU)."""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.utils.checkpoint as cp  # noqa: E402

import mbridge_lint_memory as m  # noqa: E402


class Block(torch.nn.Module):
    def __init__(self, h, f):
        super().__init__()
        self.fc1 = torch.nn.Linear(h, f, bias=False)
        self.fc2 = torch.nn.Linear(f, h, bias=False)

    def forward(self, x):
        # keeps: x (fc1 input), fc1 output (gelu input), gelu output (fc2 input); the residual add keeps nothing
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(x)))


def main():
    if not torch.cuda.is_available():
        print("SKIPPED: no GPU")
        return 77
    torch.manual_seed(0)
    T, h, f, L = 4096, 1024, 4096, 4
    dev = torch.device("cuda")
    blocks = torch.nn.ModuleList([Block(h, f) for _ in range(L)]).to(dev, torch.bfloat16)
    x = torch.randn(T, h, device=dev, dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(T, h, device=dev, dtype=torch.bfloat16)

    def run(checkpointed):
        def fwd():
            y = x
            for b in blocks:
                y = cp.checkpoint(b, y, use_reentrant=True) if checkpointed else b(y)
            return y

        for p in blocks.parameters():
            p.grad = None
        x.grad = None
        m.measure_step(fwd, lambda out: out.backward(dy))  # warm-up: allocates the gradients
        figs = m.measure_step(fwd, lambda out: out.backward(dy))
        grads = [p.grad.clone() for p in blocks.parameters()] + [x.grad.clone()]
        return figs, grads

    plain, g_plain = run(False)
    ckpt, g_ckpt = run(True)
    e = 2  # bf16
    per_block = (T * f + T * f) * e + T * h * e  # fc1 out, gelu out; the block output is the next block's kept input
    want_plain = L * per_block  # the last block's output is the returned output
    want_ckpt = L * T * h * e  # each checkpoint keeps its input (x excluded: allocated before the base) + the output
    ok = True
    for name, got, want in (("plain", plain["retained_bytes"], want_plain), ("checkpointed", ckpt["retained_bytes"], want_ckpt)):
        err = abs(got - want) / want
        print("retained {:<12} measured {:>12} expected {:>12} ({:.3%})".format(name, got, want, err))
        ok &= err < 0.01
    same = all(torch.equal(a, b) for a, b in zip(g_plain, g_ckpt))
    print("gradients bit-identical with checkpointing:", same)
    ok &= same
    print("peaks: plain fwd {forward_peak_bytes} bwd {backward_peak_bytes}; ".format(**plain) +
          "checkpointed fwd {forward_peak_bytes} bwd {backward_peak_bytes}".format(**ckpt))
    ok &= ckpt["backward_peak_bytes"] < plain["backward_peak_bytes"]

    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, MBRIDGE_LINT_MEMORY_JSON=d, RANK="3",
                   PYTHONPATH=os.path.dirname(os.path.abspath(__file__)) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        code = "import torch; t = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device='cuda'); del t"
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        path = os.path.join(d, "rank3.json")
        report = json.load(open(path)) if os.path.exists(path) else {}
        print("exit report:", report)
        ok &= report.get("rank") == 3 and report.get("peak_allocated_bytes", 0) >= 256 * 1024 * 1024
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
