"""Old config keys (``store_migrations.CONFIG_KEY_MIGRATIONS``): a stored config that holds one
still loads, and an override that names one fails naming the key that replaced it."""

import pytest

from entropic_bound.config import keys, to_dict
from entropic_bound.config_keys import check_keys
from entropic_bound.errors import ConfigError
from entropic_bound.pipeline import configure
from entropic_bound.registry import EXPERIMENTS
from entropic_bound.store.migrations import CONFIG_KEY_MIGRATIONS, migrate_config_keys

MIGRATIONS = [(name, old, new) for name, table in CONFIG_KEY_MIGRATIONS.items() for old, new in table.items()]


@pytest.mark.parametrize("name, old, new", MIGRATIONS)
def test_an_old_key_points_at_a_key_the_config_has_and_is_not_one_itself(name, old, new):
    known = set(keys(EXPERIMENTS.get(name).default_config("quick")))
    assert new in known and old not in known


@pytest.mark.parametrize("name, old, new", MIGRATIONS)
def test_an_old_key_in_an_override_names_its_new_key(name, old, new):
    with pytest.raises(ConfigError, match=rf"Unknown config key '{old}': it is now '{new}'"):
        configure(name, "quick", {old: "minilm"})
    with pytest.raises(ConfigError, match=rf"it is now '{new}'"):
        check_keys(name, {old: "minilm"})  # the CLI's fast check (no torch) too


def test_a_stored_e7_config_naming_released_models_checkpoints_loads_with_their_value():
    current = configure("E7", "paper", {"released_models": "minilm-random"}).cfg
    stored = to_dict(current)
    stored["checkpoints"] = stored.pop("released_models")
    assert EXPERIMENTS.get("E7").from_dict(stored) == current
    assert migrate_config_keys("E7", {"checkpoints": 1, "train.checkpoints": 2}) == {
        "released_models": 1,
        "train.checkpoints": 2,
    }
