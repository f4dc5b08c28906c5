"""The plan artifact: schema, limits, canonical markdown and the sha256 approvals bind to.

An approval names ``(plan_id, revision, sha256)``; the sha is computed over the canonical
markdown, the same text a human reads, so what was approved is exactly what was shown.
Validation errors are phrased for the model: each names the field and how to fix it.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from plancord.core.choices import clean_choices
from plancord.core.errors import PlanValidationError
from plancord.core.network import MAX_HOSTS_PER_STEP, host_pattern_problem, normal_host

MAX_SUMMARY_CHARS = 300
MAX_STEPS = 50
MAX_DESCRIPTION_CHARS = 1000
MAX_TOOLS_PER_STEP = 20
MAX_TOOL_NAME_CHARS = 64
MAX_FILES_PER_STEP = 20
MAX_FILE_PATTERN_CHARS = 200
MAX_PATTERN_WILDCARDS = 8
MAX_QUESTIONS = 20
MAX_QUESTION_CHARS = 500
MAX_CONTEXT_NOTES_CHARS = 4000
DEFAULT_MAX_PLAN_BYTES = 8192


class Risk(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


def _clean_text(value: Any) -> Any:
    """Normalise text so equal-looking plans hash equally: NFC, LF newlines, trimmed lines."""
    if not isinstance(value, str):
        return value
    text = unicodedata.normalize("NFC", value).replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip()


def _one_line(value: Any) -> Any:
    cleaned = _clean_text(value)
    if isinstance(cleaned, str):
        return re.sub(r"\s+", " ", cleaned)
    return cleaned


class PlanStep(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    description: str = Field(min_length=1, max_length=MAX_DESCRIPTION_CHARS)
    tools: tuple[str, ...] = Field(default=(), max_length=MAX_TOOLS_PER_STEP)
    risk: Risk = Risk.LOW
    files: tuple[str, ...] = Field(default=(), max_length=MAX_FILES_PER_STEP)
    network: tuple[str, ...] = Field(default=(), max_length=MAX_HOSTS_PER_STEP)
    """The hosts this step may reach while it is current (``core.network`` patterns)."""

    @field_validator("description", mode="before")
    @classmethod
    def _description(cls, value: Any) -> Any:
        return _clean_text(value)

    @field_validator("tools", "files", "network", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        """One name alone means a list of one; each is a single line."""
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list | tuple):
            return tuple(_one_line(v) for v in value)
        return value

    @field_validator("tools")
    @classmethod
    def _tool_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not name or len(name) > MAX_TOOL_NAME_CHARS:
                raise ValueError(f"each tool name must be 1 to {MAX_TOOL_NAME_CHARS} characters")
            if any(c in name for c in "`,"):
                raise ValueError("a tool name may not contain backticks or commas")
        return value

    @field_validator("files")
    @classmethod
    def _file_patterns(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in value:
            problem = file_pattern_problem(pattern)
            if problem is not None:
                raise ValueError(problem)
        return value

    @field_validator("network")
    @classmethod
    def _hosts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in value:
            problem = host_pattern_problem(pattern)
            if problem is not None:
                raise ValueError(problem)
        return tuple(dict.fromkeys(normal_host(pattern) for pattern in value))


def file_pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a usable workspace path or glob for a step's ``files``."""
    if not pattern or len(pattern) > MAX_FILE_PATTERN_CHARS:
        return f"each file must be 1 to {MAX_FILE_PATTERN_CHARS} characters"
    if pattern.startswith("~") or ".." in pattern.split("/"):
        return (
            "files are paths inside the workspace (or absolute paths of a directory the "
            f"operator shares with agents), not {pattern!r}"
        )
    if "`" in pattern:
        return "file paths may not contain backquotes"
    if sum(pattern.count(c) for c in "*?[") > MAX_PATTERN_WILDCARDS:
        return f"a file pattern may hold at most {MAX_PATTERN_WILDCARDS} wildcards"
    return None


class Plan(BaseModel):
    """What the agent proposes to do. Immutable once submitted."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    summary: str = Field(min_length=1, max_length=MAX_SUMMARY_CHARS)
    steps: tuple[PlanStep, ...] = Field(min_length=1, max_length=MAX_STEPS)
    questions: tuple[str, ...] = Field(default=(), max_length=MAX_QUESTIONS)
    question_choices: tuple[tuple[str, ...], ...] = ()
    """Per question, the answers the reviewer may pick with one tap (empty: free text). The
    model writes a question as ``{"question": …, "choices": [...]}``; stored plans keep the
    two lists side by side."""
    context_notes: str = Field(default="", max_length=MAX_CONTEXT_NOTES_CHARS)

    @model_validator(mode="before")
    @classmethod
    def _question_objects(cls, data: Any) -> Any:
        """Questions as text, or ``{"question", "choices"}`` objects split into the question
        and its choices; blank questions are dropped with their choices."""
        if not isinstance(data, Mapping):
            return data
        questions = data.get("questions")
        if isinstance(questions, str):
            questions = [questions]
        given = data.get("question_choices")
        if not isinstance(questions, list | tuple) or not isinstance(given, list | tuple | None):
            return data
        objects = any(isinstance(q, Mapping) for q in questions)
        if objects and given:
            raise ValueError("give each question's choices inside the question")
        if given and len(given) != len(questions):
            raise ValueError("question_choices needs one entry per question")
        kept: list[tuple[Any, Any]] = []
        for index, item in enumerate(questions):
            choices: Any = given[index] if given else ()
            if isinstance(item, Mapping):
                if set(item) - {"question", "choices"} or "question" not in item:
                    raise ValueError(
                        f"questions[{index}]: a question is text, or an object with "
                        '"question" and optional "choices"'
                    )
                item, choices = item["question"], item.get("choices") or ()
            text = _clean_text(item)
            if text != "":
                kept.append((text, choices))
        picked = [c for _, c in kept] if any(c for _, c in kept) else []
        return {**data, "questions": [t for t, _ in kept], "question_choices": picked}

    @field_validator("summary", mode="before")
    @classmethod
    def _summary(cls, value: Any) -> Any:
        return _one_line(value)

    @field_validator("context_notes", mode="before")
    @classmethod
    def _notes(cls, value: Any) -> Any:
        if value is None:
            return ""
        return _clean_text(value)

    @field_validator("questions", mode="before")
    @classmethod
    def _questions(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list | tuple):
            return tuple(q for q in (_clean_text(v) for v in value) if q != "")
        return value

    @field_validator("question_choices", mode="before")
    @classmethod
    def _choices(cls, value: Any) -> Any:
        """Each question's choices by the one rule for choices; every question's problem is
        named at once, so the model can fix them all in one go."""
        if not isinstance(value, list | tuple):
            return value
        cleaned: list[tuple[str, ...]] = []
        problems: list[str] = []
        for index, choices in enumerate(value):
            where = f"questions[{index}].choices"
            if isinstance(choices, str) or not isinstance(choices, list | tuple):
                problems.append(f"{where}: must be a list of text")
                continue
            if not choices:
                cleaned.append(())
                continue
            try:
                picked = clean_choices(choices)
            except ValueError as exc:
                problems.append(f"{where}: {exc}")
                continue
            if any("`" in choice for choice in picked):
                problems.append(f"{where}: a choice may not contain backquotes")
            cleaned.append(picked)
        if problems:
            raise ValueError("; ".join(problems))
        return tuple(cleaned)

    def choices_for(self, index: int) -> tuple[str, ...]:
        """The choices of question ``index`` (0-based); empty for a free-text question."""
        if index < len(self.question_choices):
            return self.question_choices[index]
        return ()

    @field_validator("questions")
    @classmethod
    def _question_length(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for question in value:
            if len(question) > MAX_QUESTION_CHARS:
                raise ValueError(f"each question must be at most {MAX_QUESTION_CHARS} characters")
        return value

    def canonical_json(self) -> str:
        """The plan as compact JSON; a step's ``files`` and ``network`` appear only when it
        names some, so plans that name none read (and measure) as they did before steps
        could."""
        data = self.model_dump(mode="json")
        for step in data["steps"]:
            for optional in ("files", "network"):
                if not step[optional]:
                    del step[optional]
        if not data["question_choices"]:
            del data["question_choices"]
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    def size_bytes(self) -> int:
        return len(self.canonical_json().encode("utf-8"))

    def to_markdown(self) -> str:
        return render_markdown(self)

    def sha256(self) -> str:
        return plan_sha256(self)


def _indent_continuation(text: str, prefix: str) -> str:
    first, *rest = text.split("\n")
    return "\n".join([first, *(prefix + line if line else "" for line in rest)])


CONTINUATION = "    "


def render_markdown(plan: Plan) -> str:
    """The canonical text of a plan, and what its sha covers.

    It is unambiguous, so the sha pins the plan down: step and question lines start at column
    0, a step's tools, files and network lines and a question's choice lines are indented by
    exactly three spaces and every continuation line of a multi-line field by four, so no
    text inside a field can pass for a line of another kind.
    """
    out = [f"# Plan: {plan.summary}", "", "## Steps"]
    for number, step in enumerate(plan.steps, start=1):
        description = _indent_continuation(step.description, CONTINUATION)
        out.append(f"{number}. [{step.risk.value}] {description}")
        if step.tools:
            out.append("   tools: " + ", ".join(f"`{t}`" for t in step.tools))
        if step.files:
            out.append("   files: " + ", ".join(f"`{f}`" for f in step.files))
        if step.network:
            out.append("   network: " + ", ".join(f"`{h}`" for h in step.network))
    if plan.questions:
        out += ["", "## Open questions"]
        for index, question in enumerate(plan.questions):
            out.append(f"- {_indent_continuation(question, CONTINUATION)}")
            out += [f"   choice: `{choice}`" for choice in plan.choices_for(index)]
    if plan.context_notes:
        out += ["", "## Context notes", _indent_continuation(plan.context_notes, "")]
    return "\n".join(out) + "\n"


def plan_sha256(plan: Plan) -> str:
    return hashlib.sha256(render_markdown(plan).encode("utf-8")).hexdigest()


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text or "plan"


def _explain(error: Mapping[str, Any]) -> str:
    loc = _location(tuple(error.get("loc", ())))
    kind = error.get("type", "")
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return f"{loc}: this field is required"
    if kind == "extra_forbidden":
        return (
            f"{loc}: unknown field; a plan has summary, steps, questions, context_notes "
            "and a step has description, tools, risk, files, network"
        )
    if kind == "enum":
        return f"{loc}: must be one of low, medium, high (got {_shown(error.get('input'))})"
    if kind in ("string_too_short", "too_short"):
        if loc == "steps":
            return "steps: give at least 1 step"
        return f"{loc}: must not be empty"
    if kind == "string_too_long":
        value = error.get("input", "")
        length = len(value) if isinstance(value, str) else 0
        return f"{loc}: too long ({length} characters, at most {ctx.get('max_length')}); shorten it"
    if kind == "too_long":
        return f"{loc}: too many items (at most {ctx.get('max_length')}); merge or drop some"
    if kind == "string_type":
        return f"{loc}: must be text"
    if kind in ("tuple_type", "list_type"):
        return f"{loc}: must be a list"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"{loc}: must be an object"
    if kind == "value_error":
        message = str(ctx.get("error", error.get("msg", "invalid value")))
        # The question validators name the question themselves: questions[2].choices: …
        return message if message.startswith("questions") else f"{loc}: {message}"
    return f"{loc}: {error.get('msg', 'invalid value')}"


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanValidationError(
            [f"plan: not valid JSON ({exc.msg} at position {exc.pos})"]
        ) from None
    except (RecursionError, ValueError):
        raise PlanValidationError(["plan: the JSON is too deeply nested or too large"]) from None


def _shown(value: Any) -> str:
    """A short rendering of a rejected value; huge or odd values must not raise."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        return f"a {type(value).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def _echo(error: Mapping[str, Any]) -> bool:
    """pydantic repeats a too-short error for a list whose items failed; the item errors say it."""
    if error.get("type") != "too_short":
        return False
    value = error.get("input")
    minimum = (error.get("ctx") or {}).get("min_length", 0)
    return isinstance(value, list | tuple) and len(value) >= minimum


def validate_plan(data: Any, *, max_plan_bytes: int = DEFAULT_MAX_PLAN_BYTES) -> Plan:
    """Build a ``Plan`` from model input or raise ``PlanValidationError`` listing every problem."""
    if isinstance(data, Plan):
        plan = data
    else:
        if isinstance(data, str):
            data = _parse_json(data)
        if not isinstance(data, Mapping):
            raise PlanValidationError(
                ["plan: must be an object with summary, steps, questions, context_notes"]
            )
        try:
            plan = Plan.model_validate(dict(data))
        except ValidationError as exc:
            problems = [_explain(e) for e in exc.errors(include_url=False) if not _echo(e)]
            raise PlanValidationError(problems) from None
        except (RecursionError, ValueError, TypeError) as exc:
            raise PlanValidationError([f"plan: could not be read ({type(exc).__name__})"]) from None
    size = plan.size_bytes()
    if size > max_plan_bytes:
        raise PlanValidationError(
            [
                f"plan: {size} bytes is over the limit of {max_plan_bytes}; "
                "make step descriptions shorter, merge steps or move detail out of context_notes"
            ]
        )
    return plan
