"""One layer of plan-mode settings (global, an agent's, a channel's), derived from the
settings themselves.

Why this exists: ``PlanModeSettings`` (``core.settings``) declares every plan-mode knob
once, with its type and bounds. A layer of the config file may set any of them or leave it
to the layer below, so ``PlanModeOverrides`` is built from that declaration: each field
optional (``None``: inherit), with the same bounds, so a new knob is one field of the
settings and every layer takes it. What is the layer's own is how the file spells values
(a bare number of seconds, role ids, ``review: off``) and how a layer applies.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ValidatorFunctionWrapHandler, create_model, field_validator
from pydantic.fields import FieldInfo

from plancord.config.fields import _MODEL_CONFIG, RoleKey, _approver_roles, _duration, _not_bool
from plancord.core.settings import (
    DefaultPhase,
    PlanModeSettings,
    ReviewSettings,
    longer_than_zero,
    review_section,
)

_LAYER_TYPES: Mapping[str, Any] = {
    "default_phase_by_role": dict[RoleKey, DefaultPhase],
    "review": ReviewSettings | Literal[False],
}
"""The fields a layer spells apart from the settings: role keys as the file writes them
(merged key by key over the layer below), and ``review: off`` (False) turning review off."""


class _PlanModeLayer(BaseModel):
    """The behaviour of a layer; its fields are the settings' (``PlanModeOverrides``)."""

    model_config = _MODEL_CONFIG

    @field_validator("review", mode="before", check_fields=False)
    @classmethod
    def _review(cls, value: Any) -> Any:
        section = review_section(value)
        return False if section is None and value is not None else section

    @field_validator(
        "approval_timeout", "gathering_idle_timeout", mode="before", check_fields=False
    )
    @classmethod
    def _parse_duration(cls, value: Any) -> Any:
        return _duration(value)

    @field_validator("approval_timeout", "gathering_idle_timeout", check_fields=False)
    @classmethod
    def _positive(cls, value: timedelta | None) -> timedelta | None:
        return None if value is None else longer_than_zero(value)

    @field_validator("approver_roles", mode="before", check_fields=False)
    @classmethod
    def _normalise_roles(cls, value: Any) -> Any:
        return _approver_roles(value)

    @field_validator("max_plan_bytes", mode="before", check_fields=False)
    @classmethod
    def _reject_bool(cls, value: Any) -> Any:
        return _not_bool(value)

    def apply_to(self, base: PlanModeSettings) -> PlanModeSettings:
        """``base`` with every field this layer sets replaced; roles merge key by key."""
        values = base.model_dump()
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None:
                continue
            if name == "default_phase_by_role":
                value = {**base.default_phase_by_role, **value}
            if name == "review" and value is False:
                value = None
            values[name] = value
        return PlanModeSettings.model_validate(values)


def _optional(name: str, field: FieldInfo) -> Any:
    """The settings' field ``name`` as a layer holds it: the same type and bounds, or None."""
    annotation = _LAYER_TYPES.get(name, field.annotation) | None
    if field.metadata:
        annotation = Annotated[(annotation, *field.metadata)]
    return (annotation, None)


if TYPE_CHECKING:

    class PlanModeOverrides(_PlanModeLayer):
        """One layer of plan-mode settings; ``None`` means "inherit from the layer below"."""

else:
    PlanModeOverrides = create_model(
        "PlanModeOverrides",
        __base__=_PlanModeLayer,
        __module__=__name__,
        __doc__='One layer of plan-mode settings; ``None`` means "inherit from the layer below".',
        **{name: _optional(name, field) for name, field in PlanModeSettings.model_fields.items()},
    )


def global_plan_mode(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Validate the file's global layer like any other layer, then apply it to the defaults."""
    if isinstance(value, Mapping):
        return handler(PlanModeOverrides.model_validate(value).apply_to(PlanModeSettings()))
    return handler(value)
