import pytest

from entropic_bound import EXPERIMENTS, UnknownNameError
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


def test_experiments_are_registered_on_import():
    import entropic_bound.experiments  # noqa: F401

    assert {"E1", "E2"} <= set(EXPERIMENTS.names())
