from . import cycle_a


def modules():
    return ["layernorm"] if cycle_a.GRANULARITY == "full" else ["mla_up_proj"]  # expect: RC010
