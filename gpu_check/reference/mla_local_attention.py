"""Megatron Core's local ``DotProductAttention`` under multi-latent attention, at d98e8a64 (issue 37).

At Megatron-LM d98e8a64 the local spec cannot build an MLA layer: ``MultiLatentAttention.__init__`` builds its core
attention with ``k_channels`` and ``v_channels`` (``transformer/multi_latent_attention.py`` lines 207-218: query and
key heads of ``qk_head_dim + qk_pos_emb_head_dim``, value heads of ``v_head_dim``), and the local
``DotProductAttention.__init__`` takes neither (``transformer/dot_product_attention.py`` lines 42-52), so
``get_gpt_layer_local_spec(multi_latent_attention=True)`` fails with ``TypeError: ... unexpected keyword argument
'k_channels' when instantiating DotProductAttention``. The sweep records that error from a real build attempt
(``unpatched_error``) before it measures.

Its forward needs no change: it takes the head sizes from the tensors it is given (``baddbmm`` over the query and
key's last dimension, ``bmm`` with the value) and only its final ``view`` to ``[sq, b, hidden_size_per_partition]``
uses a stored size, ``hidden_size_per_partition = kv_channels * heads / tp`` (lines 64 and 78, used at line 248),
which must be the value heads' width. So the class here is ``DotProductAttention`` itself, constructed as at
d98e8a64, with the two arguments taken and that one size set from ``v_channels``; the per-head size of line 79 sets
the softmax scale only when none is given (line 85), and MLA gives one. Megatron-LM's pull request #6564 (commit
45365c47, "Fix local MLA dot product attention channel handling", not in d98e8a64) makes the same sizes follow
``k_channels`` and ``v_channels``. Every allocation of
the attention is Megatron Core's own; the environment line says what was changed (``STANDIN``).
"""

from __future__ import annotations

STANDIN = ("Megatron Core's local DotProductAttention, constructed with MLA's k_channels and v_channels, which its "
           "constructor at d98e8a64 does not take (dot_product_attention.py lines 42-52; multi_latent_attention.py "
           "lines 207-218 pass them): its output width set to v_channels x heads / TP "
           "(gpu_check/reference/mla_local_attention.py); forward unchanged")


def make_core_attention():
    from megatron.core.transformer.dot_product_attention import DotProductAttention

    class DotProductAttentionWithChannels(DotProductAttention):
        def __init__(self, config, layer_number, attn_mask_type, attention_type, attention_dropout=None,
                     softmax_scale=None, k_channels=None, v_channels=None, cp_comm_type=None, pg_collection=None):
            super().__init__(config, layer_number, attn_mask_type, attention_type,
                             attention_dropout=attention_dropout, softmax_scale=softmax_scale,
                             cp_comm_type=cp_comm_type, pg_collection=pg_collection)
            if v_channels is not None:
                self.hidden_size_per_partition = v_channels * self.num_attention_heads_per_partition

    return DotProductAttentionWithChannels


def install(block_spec):
    """Every MLA layer's local core attention in the block spec replaced by the class above; returns how many."""
    from megatron.core.transformer.dot_product_attention import DotProductAttention
    from megatron.core.transformer.multi_latent_attention import MLASelfAttention

    cls = make_core_attention()
    count = 0
    for layer in block_spec.layer_specs:
        attention = getattr(layer.submodules, "self_attention", None)
        if attention is None or attention.module is not MLASelfAttention:
            continue
        if attention.submodules.core_attention is DotProductAttention:
            attention.submodules.core_attention = cls
            count += 1
    if not count:
        raise RuntimeError("no local MLA core attention in the block spec to replace")
    return count
