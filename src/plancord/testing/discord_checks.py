"""plancord's own checks on every request the bot sends to the simulated Discord, for the
limits SimCord 3.2.1 leaves unchecked, answered the way Discord answers them.

Why this exists: SimCord refuses what Discord refuses for message text, embeds and
components, but takes any command tree at sync, any modal pre-fill, any autocomplete list,
any number and size of files and any number of mention ids; a payload Discord would refuse
in production would pass every test. :func:`install_checks` (called by ``sim.start_world``,
so every test world has it) puts :class:`DiscordChecks` in front of SimCord's one
dispatcher, ``simcord.http.router.dispatch``, which both of SimCord's transports (the bot's
HTTP client and the interaction webhook adapter) call for every request: a request that
breaks a rule gets the error Discord gives (400 with code 50035 Invalid Form Body and the
field's path, 30015 for too many files, 413 with 40005 for too many bytes), raised as
``discord.HTTPException`` by SimCord's own translation, so the bot's handling of a refusal
runs. Each refusal is also kept (``refusals``) so a world's owner can fail a test on one
the bot swallowed. The installed package is not edited: the hook wraps the module's
function once per process and checks only the backends registered with it.

The rules, each with its source in Discord's API documentation (ids as in plancord's limits
table; the command tree's K1–K11 are in ``command_checks``):
- E9 Embed Field Structure: a field's name and value are required (not empty).
- A1/A2 Allowed Mentions Object: at most 100 user ids and 100 role ids.
- C13 String Select: max_values no more than the options offered (inferred).
- M4 Create Message: a nonce is at most 25 characters.
- F1 error 30015: at most 10 attachments; F2 Uploading Files: each at most 10 MiB;
  F3 Create Message, Limitations: at most 25 MiB in one request (40005);
  F4 Attachment Object: a description at most 1024 characters.
- D6 Text Input Structure: a pre-filled ``value`` at most 4000 characters; D9 and no longer
  than the input's ``max_length`` (inferred); D10 String Select, footnote: no disabled
  control in a modal.
- X1 Autocomplete: at most 25 choices; X2 Option Choice Structure: each name 1–100 and a
  string value at most 100.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import discord
from simcord.backend.errors import BackendError
from simcord.http import router

from plancord.discord_bot.shared.message_fit import (
    FILE_BYTES,
    FILES_PER_MESSAGE,
    REQUEST_BYTES,
    file_size,
)
from plancord.testing.command_checks import Problem, choice_problems, command_problems

MENTION_IDS_MAX = 100
NONCE_MAX = 25
ATTACHMENT_DESCRIPTION_MAX = 1024
TEXT_INPUT_MAX = 4000
AUTOCOMPLETE_CHOICES_MAX = 25
MODAL, AUTOCOMPLETE = 9, 8
MESSAGE_CALLBACKS = (4, 7)
_TEXT_INPUT, _STRING_SELECT = 4, 3

_MESSAGE_ROUTES = (
    ("POST", ("channels", "*", "messages")),
    ("PATCH", ("channels", "*", "messages", "*")),
    ("POST", ("webhooks", "*", "*")),
    ("PATCH", ("webhooks", "*", "*", "messages", "*")),
)
_SYNC_ROUTES = (("applications", "*", "commands"), ("applications", "*", "guilds", "*", "commands"))


class DiscordChecks:
    """The checks of one simulated Discord: what they looked at and what they refused."""

    def __init__(self) -> None:
        self.inspected: Counter[str] = Counter()
        """Requests looked at, by kind (message, sync, modal, autocomplete, other)."""
        self.refusals: list[str] = []

    def check(self, method: str, path: str, body: Any, files: Sequence[Any]) -> None:
        """Raise Discord's error for the first rule the request breaks."""
        kind, problems = self._problems(method, path.strip("/").split("/"), body, files)
        self.inspected[kind] += 1
        if not problems:
            return
        where, text = problems[0]
        self.refusals.append(f"{method} {path}: {'.'.join(map(str, where))}: {text}")
        raise _error_of(problems)

    def _problems(
        self, method: str, segments: list[str], body: Any, files: Sequence[Any]
    ) -> tuple[str, list[Problem]]:
        if method == "PUT" and any(_matches(segments, s) for s in _SYNC_ROUTES):
            return "sync", command_problems(body if isinstance(body, list) else [])
        if not isinstance(body, Mapping):
            body = {}
        if method == "POST" and _matches(segments, ("interactions", "*", "*", "callback")):
            data = body.get("data") or {}
            if body.get("type") == MODAL:
                return "modal", [(("data", *p), t) for p, t in modal_problems(data)]
            if body.get("type") == AUTOCOMPLETE:
                return "autocomplete", [(("data", *p), t) for p, t in autocomplete_problems(data)]
            if body.get("type") in MESSAGE_CALLBACKS:
                found = message_problems(data, files)
                return "message", [(("data", *p), t) for p, t in found]
            return "other", []
        if any(method == m and _matches(segments, s) for m, s in _MESSAGE_ROUTES):
            return "message", list(message_problems(body, files))
        return "other", []


def _matches(segments: list[str], shape: tuple[str, ...]) -> bool:
    return len(segments) == len(shape) and all(
        want in ("*", got) for want, got in zip(shape, segments, strict=True)
    )


def message_problems(body: Mapping[str, Any], files: Sequence[Any]) -> list[Problem]:
    """A message body's breaks of E9, A1/A2, C13, M4 and F1–F4."""
    problems: list[Problem] = []
    for index, embed in enumerate(body.get("embeds") or []):
        for number, field in enumerate(embed.get("fields") or []):
            for key in ("name", "value"):
                if not str(field.get(key) or "").strip():
                    where: tuple[str | int, ...] = ("embeds", index, "fields", number, key)
                    problems.append((where, "This field is required (E9)"))
    mentions = body.get("allowed_mentions") or {}
    for key, rule in (("users", "A1"), ("roles", "A2")):
        if len(mentions.get(key) or []) > MENTION_IDS_MAX:
            problems.append((("allowed_mentions", key), f"at most {MENTION_IDS_MAX} ids ({rule})"))
    for path, component in _walk(body.get("components") or [], ("components",)):
        if component.get("type") == _STRING_SELECT:
            options = len(component.get("options") or [])
            if int(component.get("max_values", 1)) > options:
                problems.append(((*path, "max_values"), f"more than the {options} options (C13)"))
    if len(str(body.get("nonce") or "")) > NONCE_MAX:
        problems.append((("nonce",), f"at most {NONCE_MAX} characters (M4)"))
    for index, attachment in enumerate(body.get("attachments") or []):
        if len(str(attachment.get("description") or "")) > ATTACHMENT_DESCRIPTION_MAX:
            text = f"at most {ATTACHMENT_DESCRIPTION_MAX} characters (F4)"
            problems.append((("attachments", index, "description"), text))
    return problems + file_problems(body, files)


def file_problems(body: Mapping[str, Any], files: Sequence[Any]) -> list[Problem]:
    """F1–F3: the message's attachments (kept and new) and the bytes of the new ones."""
    count = max(len(body.get("attachments") or []), len(files))
    problems: list[Problem] = []
    if count > FILES_PER_MESSAGE:
        problems.append((("files",), f"{count} attachments (at most {FILES_PER_MESSAGE}, F1)"))
    sizes = [file_size(f) for f in files if isinstance(f, discord.File)]
    for index, one in enumerate(sizes):
        if one > FILE_BYTES:
            problems.append(((f"files[{index}]",), f"{one} bytes (at most {FILE_BYTES}, F2)"))
    if sum(sizes) > REQUEST_BYTES:
        problems.append((("files",), f"{sum(sizes)} bytes in all (at most {REQUEST_BYTES}, F3)"))
    return problems


def modal_problems(data: Mapping[str, Any]) -> list[Problem]:
    """A modal's breaks of D6, D9 and D10."""
    problems: list[Problem] = []
    for path, component in _walk(data.get("components") or [], ("components",)):
        if component.get("disabled"):
            problems.append((path, "a modal holds no disabled control (D10)"))
        if component.get("type") != _TEXT_INPUT or component.get("value") is None:
            continue
        value = str(component["value"])
        most = int(component.get("max_length") or TEXT_INPUT_MAX)
        for limit, rule in ((TEXT_INPUT_MAX, "D6"), (most, "D9")):
            if len(value) > limit:
                text = f"{len(value)} characters (at most {limit}, {rule})"
                problems.append(((*path, "value"), text))
                break
    return problems


def autocomplete_problems(data: Mapping[str, Any]) -> list[Problem]:
    """An autocomplete answer's breaks of X1 and X2."""
    choices = data.get("choices") or []
    problems: list[Problem] = []
    if len(choices) > AUTOCOMPLETE_CHOICES_MAX:
        problems.append(
            (("choices",), f"{len(choices)} choices (at most {AUTOCOMPLETE_CHOICES_MAX}, X1)")
        )
    for index, choice in enumerate(choices):
        for path, text in choice_problems(choice):
            problems.append((("choices", index, *path), f"{text} (X2)"))
    return problems


def _walk(
    components: Sequence[Any], path: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], Mapping[str, Any]]]:
    for index, component in enumerate(components):
        if not isinstance(component, Mapping):
            continue
        where = (*path, index)
        yield where, component
        for key in ("components", "component"):
            inner = component.get(key)
            if isinstance(inner, Mapping):
                yield (*where, key), inner
                yield from _walk(inner.get("components") or [], (*where, key, "components"))
            elif isinstance(inner, list):
                yield from _walk(inner, (*where, key))


def _error_of(problems: list[Problem]) -> BackendError:
    """Discord's answer to the first problem: 30015 or 40005 for files, else 50035 with the
    field's path in ``errors`` as Discord nests it."""
    path, text = problems[0]
    if text.endswith("F1)"):
        return BackendError(400, 30015, f"Maximum number of attachments reached: {text}")
    if text.endswith(("F2)", "F3)")):
        return BackendError(413, 40005, f"Request entity too large: {text}")
    errors: dict[str, Any] = {"_errors": [{"code": "BASE_TYPE_INVALID", "message": text}]}
    for part in reversed(path):
        errors = {str(part): errors}
    return BackendError(400, 50035, "Invalid Form Body", errors=errors if path else None)


_CHECKED: weakref.WeakKeyDictionary[Any, DiscordChecks] = weakref.WeakKeyDictionary()
_ORIGINAL: list[Callable[..., Any]] = []


def _checked_dispatch(backend: Any, method: str, path: str, **kwargs: Any) -> Any:
    checks = _CHECKED.get(backend)
    if checks is not None:
        body = kwargs.get("json")
        checks.check(method, path.split("?", 1)[0], body, kwargs.get("files") or [])
    return _ORIGINAL[0](backend, method, path, **kwargs)


def install_checks(env: Any) -> DiscordChecks:
    """Check every request the bot sends to ``env``'s Discord from now on (a restart keeps
    the same backend, so the checks stay)."""
    if not _ORIGINAL:
        _ORIGINAL.append(router.dispatch)
        router.dispatch = _checked_dispatch
    checks = _CHECKED.get(env.backend)
    if checks is None:
        checks = _CHECKED[env.backend] = DiscordChecks()
    return checks
