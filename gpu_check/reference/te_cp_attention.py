"""A stand-in for Transformer Engine's context-parallel attention, so Megatron Core's local layers run at CP > 1.

The GPU machine has no Transformer Engine, and Megatron Core's local ``DotProductAttention`` refuses context
parallelism (``transformer/dot_product_attention.py`` line 58 at d98e8a64: "Context parallelism is only supported by
TEDotProductAttention"). This module gives the local spec a core attention that allocates and saves for backward what
Transformer Engine 2.18.0 (e7c550c5) does for ``cp_comm_type="p2p"``, Megatron Core's default
(``extensions/transformer_engine.py`` lines 2141-2142), with bf16 tensors in the ``sbhd`` format and a causal mask;
everything else in the layer (norms, QKV and output projections, MLP, tensor- and sequence-parallel collectives) is
Megatron Core's own. Line numbers are of ``transformer_engine/pytorch/attention/dot_product_attention/`` at
e7c550c5: ``backends.py`` (B) and ``context_parallel.py`` (C).

What is Transformer Engine's (every Python-level allocation of the forward and backward, in its order):

* query, key and value made contiguous before the CP function (B 2147-2149);
* forward (``AttnFuncWithCPAndKVP2P``): the causal two-halves view (C 1571-1578); the first ring buffer, key and value
  concatenated (C 1690); one more buffer per step (C 1706), the peer's chunk; per step the kernel's output and
  statistics and a 2-element RNG state (``fused_attn_fwd``), contiguous key/value halves in lower-triangle steps (C
  872-873) and the query's second half in upper-triangle steps (C 887); the statistics merged into a clone of the
  first step's (C 1938); the output merged in the first step's dtype (C 149, 1980-2028); saved: the query, the last
  ring buffer, the output, the merged statistics and the RNG states (C 2087, 2127-2142);
* backward: dout contiguous (C 2222); the statistics' second half made contiguous on every rank but the last (C
  2278-2294); ``dq_buffer`` (C 2396); two double buffers ``[2, k+v]`` for keys/values and their gradients (C
  2397-2401); per step the kernel's dq, dk, dv (``fused_attn_bwd``, C 1224) after contiguous halves (lower triangle:
  key and value, C 1172-1173; upper triangle: query, output, dout, C 1178); dq accumulated in ``dq_buffer`` and dk, dv
  in the ring's gradient buffer (C 2643-2810), whose views it returns.

What is the stand-in's (said in the output):

* the kernels: the forward's per-step output is plain attention on the step's query, key and value
  (``scaled_dot_product_attention`` with the groups' key and value repeated to every head, a transient of the
  forward only) and its statistics are zeros; the backward kernel returns zero gradients of the shapes cuDNN returns.
  cuDNN's workspaces are neither allocated nor modelled.
* the ring: over a fake process group a receive leaves its buffer as allocated; each received buffer is filled with
  this rank's own (every peer sends what this rank holds).
* the rank: rank 0 of the context-parallel group (the fake group's), which runs upper-triangle steps.
"""

from __future__ import annotations

STANDIN = ("Transformer Engine's context-parallel attention (cp_comm_type p2p, TE 2.18.0 e7c550c5) replaced by a "
           "stand-in modelled from its source (gpu_check/reference/te_cp_attention.py): its allocations and saved "
           "tensors are TE's, its kernels plain attention forward and zero gradients backward, cuDNN workspaces not "
           "allocated")


def _kernel_fwd(torch, q, k, v, causal, scale):
    """The step's output [sq, b, h, d] (plain attention) and statistics [b, h, sq, 1] fp32, as fused_attn_fwd returns
    them (plus its RNG state)."""
    sq, b, h, _ = q.shape
    groups = k.shape[2]
    with torch.no_grad():
        qh = q.permute(1, 2, 0, 3)
        kh, vh = [x.permute(1, 2, 0, 3).repeat_interleave(h // groups, dim=1) for x in (k, v)]
        o = torch.nn.functional.scaled_dot_product_attention(qh, kh, vh, is_causal=causal, scale=scale)
        del qh, kh, vh
        out = o.permute(2, 0, 1, 3).contiguous()
        del o
    lse = torch.zeros(b, h, sq, 1, dtype=torch.float32, device=q.device)
    rng_state = torch.zeros(2, dtype=torch.int64, device=q.device)
    return out, lse, rng_state


def _kernel_bwd(torch, q, k, v):
    """The step's dq, dk, dv as fused_attn_bwd returns them (the stand-in's are zeros)."""
    return torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)


def _fwd_step(torch, q, kv, k_shape, v_shape, i, rank, scale):
    """One ring step's inputs by section (C 1793-1905, cp_p2p_fwd_prepare_qkv C 691, cp_p2p_fwd_fused_attn C 810)."""
    k_numel = k_shape.numel()
    k = kv[:k_numel].view(*k_shape)
    v = kv[k_numel:].view(*v_shape)
    if i == 0:  # diagonal: [2, s//2, b, h, d] -> [s, b, h, d]
        qp, kp, vp = [x.view(-1, *x.shape[-3:]) for x in (q, k, v)]
        return _kernel_fwd(torch, qp, kp, vp, True, scale)
    if i <= rank:  # lower triangle: all queries, the first half of the peer's keys and values, contiguous
        qp = q.view(-1, *q.shape[-3:])
        kp, vp = k[0].contiguous(), v[0].contiguous()
        return _kernel_fwd(torch, qp, kp, vp, False, scale)
    qp = q[1].contiguous()  # upper triangle: the second half of the queries, all of the peer's keys and values
    kp, vp = [x.view(-1, *x.shape[-3:]) for x in (k, v)]
    return _kernel_fwd(torch, qp, kp, vp, False, scale)


def _lse_merge(torch, lse, step):
    """flash_attn_fwd_softmax_lse_correction (C 185-195): in place."""
    hi, lo = torch.max(lse, step), torch.min(lse, step)
    lse.copy_(hi + torch.log1p(torch.exp(lo - hi)))


def make_function(torch):
    class RingAttentionP2P(torch.autograd.Function):
        """AttnFuncWithCPAndKVP2P's allocations for bf16 sbhd causal attention on CP rank ``rank`` of ``cp``."""

        @staticmethod
        def forward(ctx, q, k, v, cp, rank, scale):
            post_o_shape = q.shape[:-1] + v.shape[-1:]
            q, k, v = [x.view(2, x.shape[0] // 2, *x.shape[1:]) for x in (q, k, v)]  # C 1571-1578
            k_shape, v_shape = k.shape, v.shape
            o_shape = q.shape[:-1] + v.shape[-1:]
            bufs = [None] * cp
            bufs[0] = torch.cat((k.view(-1), v.view(-1)), dim=-1)  # C 1690
            out_per_step, lse_per_step, rng_states = [None] * cp, [None] * cp, [None] * cp
            softmax_lse = None
            for i in range(cp + 1):
                if i < cp:
                    if i < cp - 1:
                        bufs[i + 1] = torch.empty_like(bufs[i])  # C 1706
                        bufs[i + 1].copy_(bufs[i])  # the fake ring's receive: every peer sends this rank's chunk
                    out_per_step[i], lse_per_step[i], rng_states[i] = _fwd_step(
                        torch, q, bufs[i], k_shape, v_shape, i, rank, scale)
                if i > 0:  # C 1913-1966
                    lse_per_step[i - 1].squeeze_(-1)
                    if i == 1:
                        softmax_lse = torch.clone(lse_per_step[0])  # C 1938
                    elif (i - 1) <= rank:
                        _lse_merge(torch, softmax_lse, lse_per_step[i - 1])
                    else:
                        _lse_merge(torch, softmax_lse.view(*softmax_lse.shape[:-1], 2, -1)[..., 1, :],
                                   lse_per_step[i - 1])
            out = None
            for i in range(cp):  # C 1980-2028: the output merged in the first step's dtype
                scale_i = lambda lse_i, ref: torch.exp(lse_i - ref).movedim(2, 0).unsqueeze(-1)  # noqa: E731
                if i <= rank:
                    if i == 0:
                        out = (out_per_step[0] * scale_i(lse_per_step[0], softmax_lse)).to(out_per_step[0].dtype)
                        out = out.view(o_shape)
                    else:
                        out.view(*out_per_step[i].shape).add_(out_per_step[i] * scale_i(lse_per_step[i], softmax_lse))
                else:
                    half = softmax_lse.view(*softmax_lse.shape[:-1], 2, -1)[..., 1, :]
                    out.select(0, 1).add_(out_per_step[i] * scale_i(lse_per_step[i], half))
            del out_per_step, lse_per_step
            out = out.view(post_o_shape)  # C 2029-2030, 2073: one bf16 tensor, returned and saved
            kv = bufs[-1]  # C 2087
            del bufs
            ctx.save_for_backward(q, kv, out, softmax_lse, *rng_states)  # C 2127-2142
            ctx.cp, ctx.rank, ctx.k_shape, ctx.v_shape, ctx.o_shape = cp, rank, k_shape, v_shape, o_shape
            return out

        @staticmethod
        def backward(ctx, dout):
            q, kv, out, softmax_lse = ctx.saved_tensors[:4]
            cp, rank = ctx.cp, ctx.rank
            dout = dout.contiguous()  # C 2222
            softmax_lse_ = None
            if rank < cp - 1:  # C 2278-2294
                softmax_lse_ = softmax_lse.view(*softmax_lse.shape[:-1], 2, -1)[..., 1, :].contiguous()
            dq_buffer = torch.empty_like(q)  # C 2396
            bufs = [torch.empty((2, *kv.shape), dtype=kv.dtype, device=kv.device) for _ in range(2)]  # C 2397-2400
            bufs[0][0].copy_(kv)  # C 2401
            out, dout = out.view(*ctx.o_shape), dout.view(*ctx.o_shape)
            k_numel = ctx.k_shape.numel()
            dkv = None
            for i in range(cp):
                # The fake ring's receives (C 2486-2495): the next keys and values first, the gradients last.
                send, recv = bufs[i % 2], bufs[(i + 1) % 2]
                if i == 0:
                    recv[0].copy_(send[0])
                elif i == cp - 1:
                    recv[1].copy_(send[1])
                else:
                    recv.copy_(send)
                dq_, dk_, dv_ = _bwd_step(torch, q, bufs[i % 2][0], out, dout, ctx.k_shape, ctx.v_shape, k_numel,
                                          i, cp, rank)
                _accumulate_dq(dq_buffer, dq_, i, cp, rank)  # C 2643-2697
                dkv = bufs[(i + 1) % 2][1]  # C 2727
                _accumulate_dkv(dkv, dk_, dv_, ctx.k_shape, ctx.v_shape, k_numel, i)
                del dq_, dk_, dv_
            del softmax_lse_
            dq = dq_buffer.view(-1, *dq_buffer.shape[-3:])  # C 2846-2848
            dk = dkv[:k_numel].view(ctx.k_shape).view(-1, *ctx.k_shape[-3:])
            dv = dkv[k_numel:].view(ctx.v_shape).view(-1, *ctx.v_shape[-3:])
            return dq, dk, dv, None, None, None

    return RingAttentionP2P


def _bwd_step(torch, q, kv, out, dout, k_shape, v_shape, k_numel, i, cp, rank):
    """One backward step's inputs by section (C 2578-2620, cp_p2p_bwd_prepare_qkv C 1052, cp_p2p_bwd_fused_attn
    C 1118): the contiguous halves live until the kernel returns."""
    k = kv[:k_numel].view(*k_shape)
    v = kv[k_numel:].view(*v_shape)
    flat = lambda x: x.view(-1, *x.shape[-3:])  # noqa: E731
    if i == cp - 1:  # diagonal
        return _kernel_bwd(torch, flat(q), flat(k), flat(v))
    if i >= cp - rank - 1:  # lower triangle: key and value halves made contiguous (C 1172-1173)
        return _kernel_bwd(torch, flat(q), k[0].contiguous(), v[0].contiguous())
    # upper triangle: the second halves of query, output and dout made contiguous (C 1178)
    qp, op, dop = [x[1].contiguous() for x in (q, out, dout)]
    grads = _kernel_bwd(torch, qp, flat(k), flat(v))
    del qp, op, dop
    return grads


def _accumulate_dq(dq, dq_, i, cp, rank):
    if i >= cp - rank - 1:
        dq_ = dq_.view(*dq.shape)
    if i > cp - rank - 1:
        dq.add_(dq_)
    elif i == cp - rank - 1:
        if rank == cp - 1:
            dq.copy_(dq_)
        else:
            dq[0].copy_(dq_[0])
            dq[1].add_(dq_[1])
    elif i > 0:
        dq[1].add_(dq_)
    else:
        dq[1].copy_(dq_)


def _accumulate_dkv(dkv, dk_, dv_, k_shape, v_shape, k_numel, i):
    dk = dkv[:k_numel].view(*k_shape)
    dv = dkv[k_numel:].view(*v_shape)
    for full, part in ((dk, dk_), (dv, dv_)):
        if part.numel() == full.numel():
            part = part.view(*full.shape)
            if i == 0:
                full.copy_(part)
            else:
                full.add_(part)
        else:  # half the keys (lower triangle): the first half
            if i == 0:
                full[0].copy_(part.view(*full.shape[1:]))
                full[1].zero_()
            else:
                full[0].add_(part.view(*full.shape[1:]))


def make_core_attention(torch):
    """A core-attention module with the local DotProductAttention's constructor and forward signatures."""
    from megatron.core import parallel_state
    from megatron.core.transformer.module import MegatronModule

    ring = make_function(torch)

    class TEContextParallelAttentionStandIn(MegatronModule):
        def __init__(self, config, layer_number, attn_mask_type, attention_type, attention_dropout=None,
                     softmax_scale=None, cp_comm_type=None, pg_collection=None, **_):
            super().__init__(config=config)
            if cp_comm_type not in (None, "p2p"):
                raise ValueError("the stand-in models cp_comm_type p2p only, not {!r}".format(cp_comm_type))
            self.cp = parallel_state.get_context_parallel_world_size()
            self.rank = parallel_state.get_context_parallel_rank()
            self.softmax_scale = softmax_scale

        def forward(self, query, key, value, attention_mask, attn_mask_type=None, attention_bias=None,
                    packed_seq_params=None, **_):
            q, k, v = [x.contiguous() for x in (query, key, value)]  # B 2147-2149
            scale = self.softmax_scale if self.softmax_scale is not None else q.shape[-1] ** -0.5
            out = ring.apply(q, k, v, self.cp, self.rank, scale)
            return out.view(out.shape[0], out.shape[1], -1)  # [s, b, h*d], as TEDotProductAttention returns it

    return TEContextParallelAttentionStandIn


def install(torch, block_spec):
    """Every layer's core attention in the block spec replaced by the stand-in."""
    cls = make_core_attention(torch)
    count = 0
    for layer in block_spec.layer_specs:
        attention = getattr(layer.submodules, "self_attention", None)
        if attention is not None and hasattr(attention.submodules, "core_attention"):
            attention.submodules.core_attention = cls
            count += 1
    if not count:
        raise RuntimeError("no core attention in the block spec to replace")
    return count
