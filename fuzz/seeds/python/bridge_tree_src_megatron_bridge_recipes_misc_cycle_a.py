# a imports b, b imports a: both load, as in Python.
from . import cycle_b

GRANULARITY = "selective"
MODULES = cycle_b.modules()
