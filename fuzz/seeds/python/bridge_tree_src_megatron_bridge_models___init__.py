from megatron.bridge.models.gpt_provider import GPTModelProvider
from megatron.bridge.models.llama.llama_provider import Llama3ModelProvider8B, LlamaModelProvider
from megatron.bridge.models.moe.moe_provider import TinyMoEProvider

__all__ = ["GPTModelProvider", "LlamaModelProvider", "Llama3ModelProvider8B", "TinyMoEProvider"]
