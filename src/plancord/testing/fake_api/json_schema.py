"""Whether a scripted tool input matches the tool's ``input_schema``.

The real API forces the model into a tool with ``tool_choice`` and, for a tool declared
``strict``, samples only inputs its schema accepts. A script that answers such a request
with an input outside the schema tests something the API never sends, so the fake refuses
to play it. This is the part of JSON Schema tool schemas use (type, properties, required,
additionalProperties, items, enum, const, anyOf, length and range bounds); any other keyword
is accepted without a check, as a guide for the model rather than a rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def schema_problem(value: Any, schema: Mapping[str, Any], path: str = "input") -> str | None:
    """Why ``value`` does not match ``schema``, naming where; None when it matches."""
    if "anyOf" in schema:
        options = schema["anyOf"]
        if not any(schema_problem(value, option, path) is None for option in options):
            return f"{path}: matches none of the anyOf schemas"
    problem = _type_problem(value, schema, path)
    if problem is not None:
        return problem
    if "enum" in schema and value not in schema["enum"]:
        return f"{path}: {value!r} is not one of {schema['enum']!r}"
    if "const" in schema and value != schema["const"]:
        return f"{path}: must be {schema['const']!r}"
    if isinstance(value, dict):
        return _object_problem(value, schema, path)
    if isinstance(value, list):
        return _array_problem(value, schema, path)
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{path}: longer than maxLength {schema['maxLength']}"
        if "minLength" in schema and len(value) < schema["minLength"]:
            return f"{path}: shorter than minLength {schema['minLength']}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{path}: below minimum {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{path}: above maximum {schema['maximum']}"
    return None


def _type_problem(value: Any, schema: Mapping[str, Any], path: str) -> str | None:
    wanted = schema.get("type")
    if wanted is None:
        return None
    names = wanted if isinstance(wanted, list) else [wanted]
    for name in names:
        kinds = _TYPES.get(name, ())
        if isinstance(value, bool) and name in ("integer", "number"):
            continue
        if isinstance(value, kinds):
            return None
    return f"{path}: expected {' or '.join(map(str, names))}, got {type(value).__name__}"


def _object_problem(value: dict[str, Any], schema: Mapping[str, Any], path: str) -> str | None:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    for name in schema.get("required") or ():
        if name not in value:
            return f"{path}.{name}: required"
    for name, item in value.items():
        if name in properties:
            problem = schema_problem(item, properties[name], f"{path}.{name}")
            if problem is not None:
                return problem
        elif schema.get("additionalProperties") is False:
            return f"{path}.{name}: not a property of the schema"
        elif isinstance(schema.get("additionalProperties"), Mapping):
            problem = schema_problem(item, schema["additionalProperties"], f"{path}.{name}")
            if problem is not None:
                return problem
    return None


def _array_problem(value: list[Any], schema: Mapping[str, Any], path: str) -> str | None:
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        return f"{path}: more than maxItems {schema['maxItems']}"
    if "minItems" in schema and len(value) < schema["minItems"]:
        return f"{path}: fewer than minItems {schema['minItems']}"
    items = schema.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            problem = schema_problem(item, items, f"{path}.{index}")
            if problem is not None:
                return problem
    return None


def strict_schema_problem(schema: Mapping[str, Any], path: str) -> str | None:
    """What a ``strict`` tool's schema lacks: every object must close its properties with
    ``additionalProperties: false``, as the API requires for grammar-constrained sampling."""
    if schema.get("type") == "object" or "properties" in schema:
        if schema.get("additionalProperties") is not False:
            return (
                f"{path}: For 'object' type, 'additionalProperties' must be explicitly set to false"
            )
        for name, inner in (schema.get("properties") or {}).items():
            if isinstance(inner, Mapping):
                problem = strict_schema_problem(inner, f"{path}.properties.{name}")
                if problem is not None:
                    return problem
    for key in ("items", "additionalProperties"):
        inner = schema.get(key)
        if isinstance(inner, Mapping):
            problem = strict_schema_problem(inner, f"{path}.{key}")
            if problem is not None:
                return problem
    for index, option in enumerate(schema.get("anyOf") or ()):
        if isinstance(option, Mapping):
            problem = strict_schema_problem(option, f"{path}.anyOf.{index}")
            if problem is not None:
                return problem
    return None
