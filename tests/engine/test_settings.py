"""Settings: readable validation errors that name the field, differences from a preset, library presets."""

from __future__ import annotations

import json
import re

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


def test_the_settings_groups_name_real_fields_once_in_plain_words_and_advanced_holds_the_rest():
    from engine.settings import SECTIONS, advanced_fields, advanced_keys, settings_groups

    groups = settings_groups()
    assert [g.title for g in groups] == ["Speed and depth", "Models", "Reranking", "Library"]
    grouped = [f.key for g in groups for f in g.fields]
    assert len(grouped) == len(set(grouped))
    advanced = [k for keys in advanced_keys().values() for k in keys]
    every = [f"{s}.{n}" for s, model in SECTIONS.items() for n in model.model_fields]
    assert sorted(grouped + advanced) == sorted(every) and not set(grouped) & set(advanced)
    for g in groups:
        assert g.explain.endswith(".")
    plain = advanced_fields()
    assert sorted(plain) == sorted(advanced), "every field on Advanced has a plain label and explanation too"
    labels: dict[str, str] = {}
    for f in [*(f for g in groups for f in g.fields), *plain.values()]:
        # a label, not an engine name; one sentence that fits one line of the dialog
        assert "_" not in f.label and f.label[0].isupper(), f.key
        assert f.explain.endswith(".") and ". " not in f.explain and len(f.explain) <= 120, f.key
        assert labels.setdefault(f.label, f.key) == f.key, f"{f.key} and {labels[f.label]} share the label {f.label!r}"
    assert "rerank.elo_tau" in advanced and "retrieval.hnsw_ef_search" in advanced
    assert plain["rerank.elo_tau"].label == "Referee: weight of an upset"


@pytest.mark.parametrize(("field", "problem"), [
    ('key = "retrieval.nope"\nlabel = "X"\nexplain = "Y."', "not a setting"),
    ('key = "curation.max_rounds"\nlabel = "X"', "needs a label and an explanation"),
    ('key = "answer.numeric_mode"\nlabel = "X"\nexplain = "Y."\nchoices = { pal = "Z" }', "cannot take ['pal']"),
])
def test_a_broken_groups_file_is_refused_with_the_field_it_names(tmp_path, field, problem):
    from engine.settings import settings_groups

    path = tmp_path / "groups.toml"
    path.write_text(f'[[group]]\ntitle = "T"\n[[group.field]]\n{field}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(problem)):
        settings_groups(path)


def _labelled(but: str = "") -> str:
    """The groups file's [advanced] table for every field of the settings tree and a tab title for every section,
    less ``but``."""
    from engine.settings import SECTIONS

    titles = "[advanced_section]\n" + "".join(f'{s} = "T {s}"\n' for s in SECTIONS if s != but)
    return titles + "".join(f'[advanced."{s}.{n}"]\nlabel = "L {s} {n}"\nexplain = "E."\n'
                            for s, model in SECTIONS.items() for n in model.model_fields if f"{s}.{n}" != but)


@pytest.mark.parametrize(("extra", "problem"), [
    ('[advanced."rerank.elo_tauu"]\nlabel = "X"\nexplain = "Y."\n', "names 'rerank.elo_tauu', which is not a setting"),
    ('[advanced."rerank.elo_tau"]\nlabel = "X"\n', "rerank.elo_tau needs a label and an explanation"),
    ('[advanced."rerank.elo_tau"]\nlabel = "X"\nexplain = "Y."\nlable = "Z"\n', "rerank.elo_tau has ['lable']"),
    ("", "rerank.elo_tau need a label and an explanation"),  # a field added to the engine, not labelled yet
])
def test_every_advanced_field_needs_a_plain_label_and_an_explanation(tmp_path, extra, problem):
    from engine.settings import advanced_fields, settings_groups

    path = tmp_path / "groups.toml"
    path.write_text(_labelled(but="rerank.elo_tau") + extra, encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(problem)):
        settings_groups(path)
    with pytest.raises(ConfigError, match=re.escape(problem)):
        advanced_fields(path)
    path.write_text(_labelled(), encoding="utf-8")  # every field labelled: accepted
    assert advanced_fields(path)["rerank.elo_tau"].label == "L rerank elo_tau" and settings_groups(path) == ()


def test_every_section_of_advanced_needs_a_plain_tab_title(tmp_path):
    from engine.settings import advanced_section_titles, settings_groups

    path = tmp_path / "groups.toml"
    path.write_text(_labelled(but="rerank"), encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape("the sections ['rerank'] need a title")):
        settings_groups(path)
    path.write_text(_labelled().replace("[advanced_section]\n", '[advanced_section]\nreranking = "R"\n'),
                    encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape("names ['reranking'], which are not sections")):
        settings_groups(path)
    assert advanced_section_titles()["rerank"] == "Model-based ranking"
