def broken_config(:
    return 1
