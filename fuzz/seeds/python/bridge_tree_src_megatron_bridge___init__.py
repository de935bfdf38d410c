"""Megatron Bridge look-alike for the linter's tests."""

from megatron.bridge.models.conversion.auto_bridge import AutoBridge  # re-exported like the real package

__all__ = ["AutoBridge"]
