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


def test_every_registry_is_complete_on_import_and_every_entry_resolves():
    assert EXPERIMENTS.names() == [f"E{k}" for k in range(1, 8)]
    assert STUDENTS.names() == ["B0", "B1", "B2", "B3"]
    for registry in (EXPERIMENTS, STUDENTS, TASKS, ESTIMATORS, PREDICTORS, ARCHITECTURES):
        for name in registry:
            assert registry.get(name) is not None and registry.summary(name)


def test_importing_the_package_imports_no_entry_and_no_torch():
    code = textwrap.dedent("""
        import sys
        import entropic_bound as e
        assert len(e.EXPERIMENTS) == 7 and len(e.PREDICTORS) == 4
        loaded = [m for m in sys.modules if m == "torch" or m.startswith("entropic_bound.experiments")]
        assert not loaded, loaded
    """)
    subprocess.run([sys.executable, "-c", code], check=True)
