"""An experiment's parts come from the modules beside it: its config class, scales, claims, analysis."""

from __future__ import annotations

import importlib
import types

import pytest

from entropic_bound.experiments.framework.parts import config_class_in, parts_of
from entropic_bound.registry import EXPERIMENTS


@pytest.mark.parametrize("name", EXPERIMENTS.declared())
def test_every_experiment_holds_the_parts_of_its_folder(name):
    cls = EXPERIMENTS.get(name)
    package = cls.__module__.rpartition(".")[0]
    config, claims, analysis = (
        importlib.import_module(f"{package}.{m}") for m in ("config", "claims", "analysis")
    )
    assert parts_of(config, claims, analysis) == (
        cls.config_class,
        cls.scale_settings,
        cls.declared_claims,
        cls.analysis_function,
    )
    assert cls.config_class.__name__ == f"{name}Config"
    assert cls.claims == tuple(c.id for c in claims.CLAIMS)


def test_a_config_module_without_one_experiment_config_is_refused():
    module = types.ModuleType("somewhere.config")
    with pytest.raises(TypeError, match="must define one E<k>Config class; it defines 0"):
        config_class_in(module)
    for name in ("E8Config", "E9Config"):
        setattr(module, name, type(name, (), {"__module__": "somewhere.config"}))
    with pytest.raises(TypeError, match="it defines 2"):
        config_class_in(module)
