"""A scripted ChatModel for control-flow tests: answers by purpose, validates against the schema.

Like a real model it polls ``cancel`` while it "generates": a script that sets the cancel flag (a user
pressing Cancel mid-call) makes the call raise :class:`engine.errors.Cancelled` instead of answering.
"""

from __future__ import annotations

import contextlib

import json
import re
from collections.abc import Callable

import jsonschema

from engine.errors import Cancelled, ModelOutputError
from engine.models.base import ChatResult


def purpose_of(messages) -> str:  # noqa: ANN001
    """The step a chat is for, read from its task (after the passages) or its system prompt."""
    if "Rewrite the analyst" in messages[0]["content"]:
        return "rewrite"
    if "You fill the inputs of a financial formula" in messages[0]["content"]:
        return "choose"
    if "as an evidence card" in messages[0]["content"]:
        return "card"
    if messages[0]["content"].startswith("You read an analyst's question"):
        return "intent"
    if messages[0]["content"].startswith("You write the formula of the metric"):
        return "plan"
    for cue, purpose in (("You write test questions", "qg-single"), ("You combine test questions", "qg-merge"),
                         ("You write harder test questions", "qg-deepen"),
                         ("You write comparison questions", "qg-compare"), ("You check test questions", "qg-judge"),
                         ("You check multi-part test questions", "qg-judge-parts")):
        if messages[0]["content"].startswith(cue):
            return purpose
    for cue, purpose in (("Select between", "screen"), ("Rank all", "rank"), ("Pick up to", "pick"),
                         ("Which card is more useful", "referee")):
        head = messages[1]["content"].split("Cards (quoted data", 1)[0]  # the task precedes the cards
        if any(line.startswith(cue) for line in head.splitlines()):
            return purpose
    task = messages[1]["content"].rsplit(">>>", 1)[-1]
    if "Task: check the evidence" in task:
        return "curation"
    if "Task: the numbered quotes above" in task:
        return "quotes"
    if "with a formula over the numbered figures" in task:
        return "formula"
    if "asks for one figure as the filing reports it" in task:
        return "fact"
    return "text"


LINE = re.compile(r"^F(\d+) \[(\d+)\] (.*)$", re.MULTILINE)


def figure_id(content: str, printed: str, *, passage: int | None = None, words: str = "") -> int | None:
    """The id of the first figure line a prompt lists (:func:`engine.answer.fact_lines.render_fact_lines`) whose
    value is printed as ``printed`` (digits as the filing prints them, "6,776"), in ``passage`` when given, whose
    words hold ``words``; None when none is."""
    for fid, pid, body in LINE.findall(content.rsplit("Figures of these passages", 1)[-1]):
        if passage is not None and int(pid) != passage:
            continue
        value = body.rsplit("|", 1)[-1] if body.startswith("text:") else body.split("|")[-1]
        if printed in value and words in body:
            return int(fid)
    return None


def pick(purpose: str, fid: int | None) -> dict:
    """The reply naming figure ``fid`` (None: none serves) under the formula or the one-figure schema."""
    if purpose == "fact":
        return {"fact": fid or 0}
    if fid is None:
        return {"facts": [], "formula": "", "insufficient": True}
    return {"facts": [fid], "formula": f"F{fid}", "insufficient": False}


class ScriptedChat:
    model_id = "scripted"

    def __init__(self, script: Callable[[str, list, int], dict | Exception]) -> None:
        self.script = script
        self.calls: list[tuple[str, list]] = []

    def prefix_session(self):  # noqa: ANN201
        return contextlib.nullcontext()

    def complete_json(self, messages, schema, *, max_tokens=512, cancel=None):  # noqa: ANN001, ANN201
        purpose = purpose_of(messages)
        self.calls.append((purpose, list(messages)))
        out = self.script(purpose, list(messages), sum(p == purpose for p, _ in self.calls))
        if cancel is not None and cancel():
            raise Cancelled(f"{self.model_id}: the call was cancelled")
        if isinstance(out, Exception):
            raise out
        jsonschema.validate(out, schema)
        raw = json.dumps(out)
        return ChatResult(out, raw, 100, 20, 1, 0.01, self.model_id, (raw,))


def garbage(*_: object) -> ModelOutputError:
    return ModelOutputError("schema violation after 3 attempts", raw_outputs=["{not json", "{}", "nope"])
