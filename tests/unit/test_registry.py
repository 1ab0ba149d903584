import subprocess
import sys
import textwrap

import pytest

from entropic_bound import (
    ARCHITECTURES,
    ESTIMATORS,
    EXPERIMENTS,
    PREDICTORS,
    STUDENTS,
    TASKS,
    UnknownNameError,
)
from entropic_bound.registry import Registry


def test_lookup_and_miss_lists_available_with_suggestion():
    reg = Registry("widget")

    @reg.register("alpha", summary="first")
    def alpha():
        return 1

    reg.register("beta")(lambda: 2)
    assert reg.get("alpha") is alpha and reg.names() == ["alpha", "beta"] and "beta" in reg
    assert reg.summary("alpha") == "first"
    with pytest.raises(
        UnknownNameError, match=r"Unknown widget 'alpah'. Available: alpha, beta. Did you mean 'alpha'\?"
    ):
        reg.get("alpah")
    with pytest.raises(ValueError, match="already registered"):
        reg.register("alpha")(alpha)


def test_lazy_entry_imports_its_module_only_when_looked_up(tmp_path, monkeypatch):
    (tmp_path / "lazy_widget_mod.py").write_text("IMPORTED = True\nclass Widget:\n    tag = 'w'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry("widget")
    reg.register_lazy("w", "lazy_widget_mod:Widget.tag", summary="a widget")
    assert reg.names() == ["w"] and reg.summary("w") == "a widget"
    assert "lazy_widget_mod" not in sys.modules
    assert reg.get("w") == "w" and "lazy_widget_mod" in sys.modules
    with pytest.raises(ValueError, match="'module:object'"):
        reg.register_lazy("x", "no_colon_here", summary="")


REGISTRIES = (EXPERIMENTS, STUDENTS, TASKS, ESTIMATORS, PREDICTORS, ARCHITECTURES)
ENTRIES = [(registry, name) for registry in REGISTRIES for name in registry]


@pytest.mark.parametrize(
    ("registry", "name"), ENTRIES, ids=[f"{registry.kind}-{name}" for registry, name in ENTRIES]
)
def test_every_entry_resolves_and_has_a_summary(registry, name):
    assert registry.get(name) is not None and registry.summary(name)


@pytest.mark.parametrize("name", EXPERIMENTS.names())
def test_an_experiment_is_registered_under_the_name_its_class_gives_it(name):
    cls = EXPERIMENTS.get(name)
    assert cls.__name__.startswith(name) and not cls.__name__[len(name)].isdigit()
    assert cls.default_config("quick") is not None


def test_importing_the_package_imports_no_entry_and_no_torch():
    """The registries are complete on import (as many names as ``registry.py`` declares lines) and
    nothing behind them is imported."""
    code = textwrap.dedent("""
        import sys
        import entropic_bound as e
        from entropic_bound.registry import _BUILT_IN
        for registry in (e.EXPERIMENTS, e.STUDENTS, e.TASKS, e.ESTIMATORS, e.PREDICTORS):
            assert len(registry) == sum(r is registry for r, *_ in _BUILT_IN) > 0, registry.kind
        loaded = [m for m in sys.modules if m == "torch" or m.startswith("entropic_bound.experiments")]
        assert not loaded, loaded
    """)
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", EXPERIMENTS.names())
def test_looking_up_one_experiment_imports_no_other(name):
    """``entropic_bound.experiments`` imports no experiment, so the first lookup pays for one only."""
    code = textwrap.dedent(f"""
        import sys
        from entropic_bound.registry import EXPERIMENTS
        import entropic_bound.experiments
        assert not [m for m in sys.modules if m.startswith("entropic_bound.experiments.e")]
        folder = EXPERIMENTS.get({name!r}).__module__.split(".")[2]
        others = {{m.split(".")[2] for m in sys.modules if m.startswith("entropic_bound.experiments.e")}}
        assert others == {{folder}}, others
    """)
    subprocess.run([sys.executable, "-c", code], check=True)
