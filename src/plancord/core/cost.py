"""What planning cost so far, in tokens and (where the operator set prices) in money.

The model's usage is recorded per call. For a plan message the calls between entering plan
mode and submitting the revision are summed: input as Anthropic bills it (cache writes at
1.25×, cache reads at 0.1×) and output. With ``anthropic.prices`` for the model (dollars per
million tokens), the money follows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from plancord.core.ports import ModelUsage


class Price(BaseModel):
    """Dollars per million tokens for one model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)


@dataclass(frozen=True, slots=True)
class Cost:
    billed_input: float
    output: int
    dollars: float | None

    def line(self) -> str:
        """``💰 Planning so far: 45.2k input, 3.1k output tokens · ≈ $0.21``."""
        text = (
            f"💰 Planning so far: {_tokens(self.billed_input)} input, "
            f"{_tokens(self.output)} output tokens"
        )
        if self.dollars is not None:
            text += f" · ≈ ${self.dollars:.2f}"
        return text


def cost_of(calls: Iterable[tuple[str, ModelUsage]], prices: Mapping[str, Price]) -> Cost | None:
    """The sum of ``(model, usage)`` calls; money only when every model has a price."""
    billed = 0.0
    output = 0
    dollars: float | None = 0.0
    seen = False
    for model, usage in calls:
        seen = True
        billed += usage.billed_input()
        output += usage.output_tokens
        price = prices.get(model)
        if price is None or dollars is None:
            dollars = None
            continue
        dollars += (usage.billed_input() * price.input + usage.output_tokens * price.output) / 1e6
    if not seen:
        return None
    return Cost(billed, output, dollars)


def budget_spent(cost: Cost | None, *, dollars: float | None, tokens: int | None) -> str | None:
    """Why a plan under this budget must stop now, or None while budget is left.

    Tokens count billed input plus output. A dollar budget on a model without a price
    cannot be checked, and an unchecked budget is no budget: that stops too, saying why.
    """
    if cost is None:
        return None
    used = cost.billed_input + cost.output
    if tokens is not None and used >= tokens:
        return f"the plan's budget of {_tokens(tokens)} tokens is spent ({_tokens(used)} used)"
    if dollars is not None:
        if cost.dollars is None:
            return (
                f"the plan has a budget of ${dollars:.2f} but no price is configured for its "
                "model (anthropic.prices), so what it spends cannot be counted"
            )
        if cost.dollars >= dollars:
            return f"the plan's budget of ${dollars:.2f} is spent (≈ ${cost.dollars:.2f} used)"
    return None


def _tokens(count: float) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1_000:
        return f"{count / 1_000:.1f}k"
    return f"{count:.0f}"
