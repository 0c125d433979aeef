"""Prompts come through the settings: a preset's prompt folder replaces built-in prompts, one by one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.errors import ConfigError
from engine.prompts import BUILTIN_DIR, evidence_messages, prompt
from engine.records import Chunk, Passage
from engine.settings import PromptSettings, Settings


def test_a_prompt_folder_replaces_the_prompts_it_has_and_only_those(tmp_path: Path) -> None:
    (tmp_path / "evidence_system.md").write_text("You read filings for a credit desk.\n", encoding="utf-8")
    own = PromptSettings(folder=str(tmp_path))
    assert prompt("evidence_system", own) == "You read filings for a credit desk."
    builtin = (BUILTIN_DIR / "curation.md").read_text(encoding="utf-8").strip()
    assert prompt("curation", own) == prompt("curation") == builtin  # not in the folder: the built-in one
    # an edited prompt file is read again (the cache is keyed by the file's modification time)
    path = tmp_path / "evidence_system.md"
    path.write_text("You read filings for an equity desk.\n", encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert prompt("evidence_system", own) == "You read filings for an equity desk."
    with pytest.raises(ConfigError, match="no prompt 'no_such_step'"):
        prompt("no_such_step", own)


def test_the_evidence_chat_follows_the_prompt_settings(tmp_path: Path) -> None:
    (tmp_path / "evidence_system.md").write_text("SYSTEM FROM THE PRESET", encoding="utf-8")
    text = "Net sales  24,306  22,100\n" * 200  # far longer than a passage may be shown
    passage = Passage(Chunk(1, 1, "ACME_2021_10K", 3, 0, len(text), "table", text), "ACME 10-K 2021")
    settings = Settings().with_overrides(prompts={"folder": str(tmp_path), "max_passage_chars": 300})
    system, user = evidence_messages("Task: answer.", "What were net sales?", [passage], settings.prompts)
    assert system["content"] == "SYSTEM FROM THE PRESET"
    body = user["content"].split("<<<\n", 1)[1].split("\n>>>", 1)[0]
    assert body == text[:300]
    assert user["content"].endswith("Task: answer.\n\nQuestion: What were net sales?")
