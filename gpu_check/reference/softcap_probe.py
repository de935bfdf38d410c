"""What logit softcapping keeps for backward: Megatron Bridge's Gemma 2 and Gemma 4 output layers return
``scale * torch.tanh(logits / scale)`` (``models/gemma/gemma2_provider.py`` lines 411-425, ``modeling_gemma4.py``
lines 1479-1491 at 067f987) on the output layer's bf16 logits. The estimate counts tanh's bf16 result, 2 bytes a
logit (memory/rank.hpp, kSoftcapKeptBytes); this measures it.

``python3 softcap_probe.py [TOKENS VOCAB_PER_RANK]`` (default 4096 and 65536: Gemma 4 VL's job, 262144 / TP 4) prints
one JSON line: the bytes allocated by the softcapped forward beyond its input and its output (what autograd keeps),
and the saved tensors autograd reports (``torch.autograd.graph.saved_tensors_hooks``).
"""

from __future__ import annotations

import json
import sys


def main(argv):
    import torch

    tokens, vocab = (int(argv[1]), int(argv[2])) if len(argv) > 2 else (4096, 65536)
    scale = 30.0
    # The output layer's result: a bf16 tensor that is the output of an autograd op, as ColumnParallelLinear's is.
    weight = torch.randn(vocab, 1, dtype=torch.bfloat16, device="cuda", requires_grad=True)
    hidden = torch.randn(tokens, 1, 1, dtype=torch.bfloat16, device="cuda")
    logits = torch.matmul(hidden, weight.t())  # [tokens, 1, vocab]
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    saved = []

    def pack(t):
        saved.append({"shape": list(t.shape), "dtype": str(t.dtype), "bytes": t.numel() * t.element_size(),
                      "is_logits": t.data_ptr() == logits.data_ptr()})
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = scale * torch.tanh(logits / scale)
    torch.cuda.synchronize()
    after = torch.cuda.memory_allocated()
    out_bytes = out.numel() * out.element_size()
    out.sum().backward()  # the graph runs: what was saved was what backward needed
    print(json.dumps({"probe": "softcap", "tokens": tokens, "vocab_per_rank": vocab, "scale": scale,
                      "logits_bytes": logits.numel() * logits.element_size(),
                      "kept_beyond_output_bytes": after - before - out_bytes, "saved_tensors": saved,
                      "torch": torch.__version__, "device": torch.cuda.get_device_name()}))


if __name__ == "__main__":
    main(sys.argv)
