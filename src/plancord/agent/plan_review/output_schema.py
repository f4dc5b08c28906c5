"""The findings' schema in the part of JSON Schema that structured outputs take.

Structured outputs (``output_config.format``) compile the schema into a grammar, and "If
you use an unsupported feature, you'll receive a 400 error". Not supported: "Numerical
constraints (such as ``minimum``, ``maximum``, ``multipleOf``)", "String constraints
(``minLength``, ``maxLength``)", "Array constraints beyond ``minItems`` of 0 or 1",
"``additionalProperties`` set to anything other than ``false``" (platform.claude.com/docs/
en/build-with-claude/structured-outputs, "JSON Schema limitations"). So each such bound moves
into its node's description, as the SDKs' own transformation does ("Remove unsupported
constraints", "Update descriptions with constraint info"), every object is closed, and the
host still checks every bound on the answer (``core.review_answer``): the grammar guides the
model, the parse decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

_BOUNDS: Final[dict[str, str]] = {
    "minimum": "at least {}",
    "maximum": "at most {}",
    "exclusiveMinimum": "more than {}",
    "exclusiveMaximum": "less than {}",
    "multipleOf": "a multiple of {}",
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "minItems": "at least {} items",
    "maxItems": "at most {} items",
    "uniqueItems": "items unique: {}",
    "minProperties": "at least {} properties",
    "maxProperties": "at most {} properties",
}
"""The bounds structured outputs refuse, and how a description says them."""
_SUPPORTED_MIN_ITEMS: Final = (0, 1)


def structured_output_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with every bound structured outputs refuse said in its description
    instead, and every object closed (``additionalProperties: false``)."""
    out: dict[str, Any] = {}
    said: list[str] = []
    for key, value in schema.items():
        if key in _BOUNDS and not (key == "minItems" and value in _SUPPORTED_MIN_ITEMS):
            said.append(_BOUNDS[key].format(value))
        elif key == "properties" and isinstance(value, Mapping):
            out[key] = {name: structured_output_schema(inner) for name, inner in value.items()}
        elif key == "items" and isinstance(value, Mapping):
            out[key] = structured_output_schema(value)
        elif key in ("anyOf", "allOf") and isinstance(value, list):
            out[key] = [structured_output_schema(option) for option in value]
        else:
            out[key] = value
    if out.get("type") == "object":
        out["additionalProperties"] = False
    if said:
        bounds = "; ".join(said)
        bounds = bounds[0].upper() + bounds[1:] + "."
        described = str(out.get("description", "")).strip()
        out["description"] = f"{described} {bounds}" if described else bounds
    return out
