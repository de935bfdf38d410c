"""Import-only stand-ins for modules Megatron Bridge imports unconditionally that the dump machine lacks.

Every `NAME.*` module of a stood-in package exists; an upper-case attribute is a dummy class (subclassable,
callable, any attribute), a lower-case one a submodule that is also callable: called with a function it hands the
function back (a decorator), otherwise a dummy. Nothing here computes a config value; Transformer Engine says the
version Bridge locks, so that its version gates take the container's branch. Fields that depend on these packages
beyond that can differ from a real launch and are not compared.
"""
import abc
import importlib.abc
import importlib.machinery
import sys
import types

# Exactly the modules Bridge 067f987 and its Megatron Core import without a guard (shared/reference/bridge-dryrun.md);
# a module imported under try/except must stay missing, or the code takes the path for a package that is there.
STOOD_IN = ("transformer_engine", "datasets", "nemo_run", "diffusers", "modelopt", "nvidia_resiliency_ext", "hydra",
            "webdataset", "fla", "megatron.energon")


class DummyType(abc.ABCMeta):
    """Class-level attributes of a dummy class (`te.DType.kFloat8E4M3`) are dummies too. An ABCMeta, so that a class
    deriving from a dummy and from `abc.ABC` has one metaclass."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Dummy()


class Dummy(metaclass=DummyType):
    def __init__(self, *args, **kwargs):
        pass

    def __init_subclass__(cls, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return Dummy()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Dummy()

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False


class FusedAdam(Dummy):
    """Transformer Engine's optimizer, for its signature alone: Megatron Core's OptimizerConfig looks for the
    arguments --use-precision-aware-optimizer needs (optimizer_config.py), which the performance launches set for
    every bf16 Adam run (run_script.py), so the TE their container has takes them."""

    def __init__(self, params, master_weight_dtype=None, exp_avg_dtype=None, exp_avg_sq_dtype=None,
                 use_decoupled_grad=False, **kwargs):
        pass


# Version gates read a package's __version__: Transformer Engine's is the release Bridge 067f987 locks
# (uv.lock: transformer-engine 2.18.0), so that a launch takes the branch its container takes; Megatron Core asserts
# a minimum nvidia-resiliency-ext when it is importable. The others say 0.0.0, the oldest branch.
VERSIONS = {"transformer_engine": "2.18.0", "nvidia_resiliency_ext": "99.0.0"}
# Stood-in classes whose signature is read.
CLASSES = {"transformer_engine.pytorch.optimizers": {"FusedAdam": FusedAdam}}


class StandIn(types.ModuleType):
    __version__ = "0.0.0"

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name[:1].isupper():
            value = type(name, (Dummy,), {"__module__": self.__name__})
        else:
            value = importlib.import_module(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return Dummy()  # a decorator factory's result, or an empty iterable


class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if any(fullname == p or fullname.startswith(p + ".") for p in STOOD_IN):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        m = StandIn(spec.name)
        m.__path__ = []
        if spec.name in VERSIONS:
            m.__version__ = VERSIONS[spec.name]
        for name, cls in CLASSES.get(spec.name, {}).items():
            setattr(m, name, cls)
        return m

    def exec_module(self, module):
        pass


def install():
    if not any(isinstance(f, Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, Finder())
