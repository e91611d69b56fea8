"""`[prices]` of config.toml: the model prices that override the defaults
(services/llm/pricing.py), each table checked with a one-line error."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from seam.services.llm.pricing import DEFAULT_PRICES, Price, PriceTable
from seam.wiring.settings import ConfigError

__all__ = ["Price", "PriceTable", "price_table"]


def price_table(
    overrides: Mapping[str, Mapping[str, float]] | None = None, *, where: str = "config"
) -> PriceTable:
    """Defaults plus the `[prices.<model>]` tables of the config file."""
    prices = dict(DEFAULT_PRICES)
    for model, values in (overrides or {}).items():
        try:
            prices[model] = Price.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'value'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ConfigError(f"{where}: prices.{model}: {problems}") from None
    return PriceTable(prices)
