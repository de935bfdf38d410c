from pkg.m0 import *
from megatron.bridge.training.config import ConfigContainer

def c_config() -> ConfigContainer:
    return ConfigContainer(model=make())
#=== m0
from .m1 import *
def make():
    return helper()
#=== m1
from .m0 import *
def helper():
    return make()
