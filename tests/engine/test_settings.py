"""Settings: readable validation errors that name the field, differences from a preset, library presets."""

from __future__ import annotations

import json

import pytest

from engine.errors import ConfigError
from engine.settings import PRESETS_DIR, Settings, diff_settings, list_presets, load_preset, save_preset


def test_validation_error_names_each_field_readably():
    with pytest.raises(ConfigError) as info:
        Settings().with_overrides(models={"threads": 0}, retrieval={"reranker_device": "gpu", "nope": 1})
    assert info.value.problems == {
        "models.threads": "Input should be greater than or equal to 1 (got 0)",
        "retrieval.reranker_device": "Input should be 'auto', 'cpu' or 'cuda' (got 'gpu')",
        "retrieval.nope": "Extra inputs are not permitted (got 1)",
    }
    assert "models.threads: Input should be greater than or equal to 1" in str(info.value)


def test_diff_settings_is_what_with_overrides_needs():
    base = load_preset("default")
    other = base.with_overrides(home="/tmp/x", curation={"max_rounds": 5}, models={"threads": 3})
    diff = diff_settings(base, other)
    assert diff == {"models": {"threads": 3}, "curation": {"max_rounds": 5}}  # home is not a setting to carry
    assert base.with_overrides(**diff) == other.model_copy(update={"home": None})
    assert diff_settings(base, base) == {}


def test_library_presets_are_listed_loaded_and_never_shadow_built_ins(tmp_path):
    home = tmp_path / "lib"
    wanted = Settings().with_overrides(retrieval={"passage_top_k": 8}, answer={"numeric_mode": "cot"})
    path = save_preset("mine", wanted, home)
    assert path == home / "presets" / "mine.json" and path.parent != PRESETS_DIR
    assert json.loads(path.read_text()) == {"retrieval": {"passage_top_k": 8}, "answer": {"numeric_mode": "cot"}}
    assert list_presets(home) == [*list_presets(), "mine"]
    assert load_preset("mine", home) == wanted
    with pytest.raises(ConfigError, match="not found"):
        load_preset("mine")  # another library does not see it
    for bad in ("default", "../evil", "a b", ""):
        with pytest.raises(ConfigError):
            save_preset(bad, wanted, home)
    assert sorted(p.name for p in (home / "presets").iterdir()) == ["mine.json"]
