"""Prompts: the templates (``resources/prompts`` or a folder the settings name) and the evidence chat every
step that reads passages shares (curation, answer)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from engine.errors import ConfigError
from engine.models.base import ChatMessage
from engine.pages import page_number
from engine.records import Passage
from engine.settings import RESOURCES_DIR, PromptSettings

BUILTIN_DIR = RESOURCES_DIR / "prompts"


@lru_cache(maxsize=64)
def _read(path: Path, mtime_ns: int) -> str:  # the mtime keys the cache: an edited prompt file is read again
    return path.read_text(encoding="utf-8").strip()


def prompt(name: str, settings: PromptSettings | None = None) -> str:
    """The prompt template ``name``: from the settings' folder when it has one, else the built-in one.

    Raises:
        ConfigError: no such prompt.
    """
    folders = [Path(settings.folder).expanduser()] if settings is not None and settings.folder else []
    for folder in [*folders, BUILTIN_DIR]:
        path = folder / f"{name}.md"
        if path.is_file():
            return _read(path, path.stat().st_mtime_ns)
    raise ConfigError(f"no prompt {name!r} in {', '.join(str(f) for f in [*folders, BUILTIN_DIR])}")


def render_passages(passages: Sequence[Passage], max_chars: int) -> str:
    """Numbered passages for a prompt, each with its page as people read it ("page 47 (printed 46)"); passage
    text is fenced so it reads as quoted data."""
    blocks = []
    for i, p in enumerate(passages, start=1):
        text = p.prompt_text()[:max_chars].replace("<<<", "< < <").replace(">>>", "> > >")
        page = page_number(p.chunk.page_index, p.chunk.printed_folio)
        blocks.append(f"[{i}] {p.title}, page {page}\n<<<\n{text}\n>>>")
    return "\n\n".join(blocks)


def evidence_messages(task: str, question: str, passages: Sequence[Passage],
                      settings: PromptSettings, facts: str = "") -> list[ChatMessage]:
    """The chat of every evidence step (curation, answer): one shared system prompt, the passages, then the
    task and the question. Steps of one run that show the same leading passages therefore share a prompt
    prefix, which the chat model can keep in its cache instead of reading it again. ``facts``: a block the
    answer step shows after the passages (:func:`engine.answer.fact_lines.render_fact_lines`)."""
    body = render_passages(passages, settings.max_passage_chars)
    if facts:
        body = f"{body}\n\n{facts}"
    return [{"role": "system", "content": prompt("evidence_system", settings)},
            {"role": "user", "content": f"Passages:\n\n{body}\n\n{task}\n\nQuestion: {question}"}]
