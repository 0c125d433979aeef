"""Model interfaces and adapters. Concrete adapters import their heavy libraries lazily."""

from __future__ import annotations

from engine.models.base import ChatMessage, ChatModel, ChatResult, CrossScorer, Embedder

__all__ = ["ChatMessage", "ChatModel", "ChatResult", "CrossScorer", "Embedder"]
