BROKEN_LABELS = ["core_attn"]


def half_written_config(:  # expect: IN002
    return None
