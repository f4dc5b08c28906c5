"""Reading the file: YAML with the line of every key, secrets refused, and validation errors
turned into one line an operator can act on (file, line, key, what is wrong)."""

from __future__ import annotations

import math
import os
import re
import types
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

import yaml
from pydantic import (
    BaseModel,
    ValidationError,
)
from pydantic_core import ErrorDetails
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from plancord.config.fields import _SECRET_KEYS, DEFAULT_CONFIG_FILE, ConfigError, _suggestion
from plancord.config.model import Config, _KeyPath


class _Loader(yaml.SafeLoader):
    """Safe YAML with YAML 1.2 scalars: only true/false are booleans and only plain decimals
    are integers, so ``shell_sandbox: off`` stays the word "off" and ``1:30`` is not 90."""


_Loader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:int")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^[-+]?(?:0|[1-9][0-9_]*)$"),
    list("-+0123456789"),
)


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


class _Index(int):
    """A list position in a key path, shown as ``[n]`` rather than as a key."""


def _dotted(path: Sequence[object]) -> str:
    text = ""
    for part in path:
        if isinstance(part, _Index) and text:
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "(top level)"


def _record_lines(
    node: Node, path: _KeyPath, lines: dict[_KeyPath, int], source: str, stack: set[int]
) -> None:
    """Note the line of every key and list item under ``node``; reject duplicate keys."""
    if id(node) in stack:
        return
    stack.add(id(node))
    if isinstance(node, MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = str(key_node.value)
            key_path = (*path, key)
            if key in seen:
                raise ConfigError(
                    f"{source}:{_line(key_node)}: {_dotted(key_path)}: duplicate key;"
                    " each key may appear once",
                    line=_line(key_node),
                    key=_dotted(key_path),
                )
            seen.add(key)
            lines[key_path] = _line(key_node)
            _record_lines(value_node, key_path, lines, source, stack)
    elif isinstance(node, SequenceNode):
        for index, item in enumerate(node.value):
            item_path = (*path, str(index))
            lines[item_path] = _line(item)
            _record_lines(item, item_path, lines, source, stack)
    stack.discard(id(node))


def _load_yaml(text: str, source: str) -> tuple[Any, dict[_KeyPath, int]]:
    lines: dict[_KeyPath, int] = {}
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, lines
        lines[()] = _line(node)
        _record_lines(node, (), lines, source, set())
        return loader.construct_document(node), lines
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = exc.problem or exc.context or "unreadable"
        context = f" ({exc.context})" if exc.problem and exc.context else ""
        raise ConfigError(
            " ".join(f"{where}: invalid YAML: {problem}{context}".split()),
            line=mark.line + 1 if mark is not None else None,
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(" ".join(f"{source}: invalid YAML: {exc}".split())) from None
    finally:
        loader.dispose()


def _walk_keys(data: Any, path: _KeyPath, stack: set[int]) -> Iterator[_KeyPath]:
    if id(data) in stack:
        return
    stack.add(id(data))
    if isinstance(data, dict):
        for key, value in data.items():
            yield (*path, str(key))
            yield from _walk_keys(value, (*path, str(key)), stack)
    elif isinstance(data, list):
        for index, item in enumerate(data):
            yield from _walk_keys(item, (*path, str(index)), stack)
    stack.discard(id(data))


def _reject_secrets(data: Any, lines: Mapping[_KeyPath, int], source: str) -> None:
    for path in _walk_keys(data, (), set()):
        if path[:1] == ("agents",) and len(path) == 2:
            continue
        env_name = _SECRET_KEYS.get(path[-1].lower().replace("-", "_"))
        if env_name is not None:
            line = lines.get(path)
            where = f"{source}:{line}" if line is not None else source
            raise ConfigError(
                f"{where}: {_dotted(path)}: secrets do not belong in the config file;"
                f" remove this key and set the {env_name} environment variable",
                line=line,
                key=_dotted(path),
            )


def _find_key(mapping: Mapping[Any, Any], part: object) -> tuple[bool, Any]:
    if part in mapping:
        return True, part
    for key in mapping:
        if str(key) == str(part):
            return True, key
    return False, None


def _data_path(data: Any, loc: Sequence[int | str]) -> list[object]:
    """The keys of ``loc`` that exist in the input, without pydantic's type and union tags."""
    path: list[object] = []
    node = data
    for part in loc:
        if part == "[key]":
            break
        if isinstance(node, Mapping):
            found, key = _find_key(node, part)
            if found:
                path.append(key)
                node = node[key]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            path.append(_Index(part))
            node = node[part]
    return path


def _model_at(path: Sequence[object]) -> type[BaseModel] | None:
    annotation: Any = Config
    for part in [*path, None]:
        while True:
            origin = get_origin(annotation)
            if origin is Annotated:
                annotation = get_args(annotation)[0]
            elif origin in (Union, types.UnionType):
                members = [arg for arg in get_args(annotation) if arg is not type(None)]
                if len(members) != 1:
                    return None
                annotation = members[0]
            else:
                break
        if part is None:
            break
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = annotation.model_fields.get(str(part))
            if field is None:
                return None
            annotation = field.annotation
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
        else:
            return None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(error: ErrorDetails, path: Sequence[object]) -> str:
    kind = error["type"]
    message = error["msg"]
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden" and path:
        model = _model_at(path[:-1])
        allowed = list(model.model_fields) if model is not None else []
        listing = f" (allowed: {', '.join(allowed)})" if allowed else ""
        hint = _suggestion(str(path[-1]), allowed)
        return f"unknown key{hint}" if hint else f"unknown key{listing}"
    if kind == "value_error":
        return str(ctx.get("error", message.removeprefix("Value error, ")))
    if kind in ("enum", "literal_error"):
        return f"{_short(error['input'])} is not allowed; use {ctx.get('expected', '')}"
    return f"{message[:1].lower()}{message[1:]} (got {_short(error['input'])})"


def _validation_message(
    exc: ValidationError, data: Any, lines: Mapping[_KeyPath, int], source: str
) -> ConfigError:
    problems: list[tuple[int, str, int | None, str]] = []
    for error in exc.errors(include_url=False):
        path = _data_path(data, error["loc"])
        key_path = tuple(str(part) for part in path)
        line = next(
            (lines[key_path[:n]] for n in range(len(key_path), -1, -1) if key_path[:n] in lines),
            None,
        )
        detail = _describe(error, path)
        if error["loc"][-1:] == ("[key]",) and error["type"] != "value_error":
            detail = f"this key is not valid: {detail}"
        problems.append((line or 0, _dotted(path), line, detail))
    problems.sort(key=lambda problem: problem[0] if problem[2] is not None else math.inf)
    said = tuple(
        " ".join(f"{source if at is None else f'{source}:{at}'}: {key}: {detail}".split())
        for _, key, at, detail in problems
    )
    _, key, line, _ = problems[0]
    return ConfigError("; ".join(said), line=line, key=key, problems=said)


def parse_config_text(
    text: str, *, source: str = "<config>", base_dir: Path | None = None
) -> Config:
    """Validate YAML ``text``; errors name ``source``; relative paths resolve against ``base_dir``
    (the current directory when it is ``None``)."""
    data, lines = _load_yaml(text, source)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        line = lines.get((), 1)
        kind = "a list" if isinstance(data, list) else f"the value {_short(data)}"
        raise ConfigError(
            f"{source}:{line}: the top level must be a mapping of keys such as 'plan_mode:',"
            f" not {kind}",
            line=line,
        )
    _reject_secrets(data, lines, source)
    context = {"base_dir": (base_dir if base_dir is not None else Path.cwd()).absolute()}
    try:
        return Config.model_validate(data, context=context)
    except ValidationError as exc:
        raise _validation_message(exc, data, lines, source) from None


DATA_DIR_ENV = "PLANCORD_DATA_DIR"


def load_config(path: Path | None) -> Config:
    """Load ``path``; with ``None``, ``./config.yaml`` when it exists, else the defaults.

    ``$PLANCORD_DATA_DIR``, when set, wins over the file's ``data_dir``: the Docker image sets
    it to its volume, so any config mounted into the container keeps its data there."""
    config = _load_config_file(path)
    override = os.environ.get(DATA_DIR_ENV, "").strip()
    if override:
        config = config.model_copy(update={"data_dir": Path(override).expanduser().absolute()})
    return config


def _load_config_file(path: Path | None) -> Config:
    if path is None:
        if not DEFAULT_CONFIG_FILE.is_file():
            return parse_config_text("", source="<defaults>")
        path = DEFAULT_CONFIG_FILE
    if not path.exists():
        raise ConfigError(f"config file not found: {path}")
    if path.is_dir():
        raise ConfigError(f"config file is a directory, not a file: {path}")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; save the file as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    return parse_config_text(text, source=str(path), base_dir=path.parent)
