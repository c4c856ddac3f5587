"""Dependencies bound into nodes at assembly: instance, config, memory store, model factory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from state.config import Config, load_config
from state.instance import Instance
from state.memory import MemoryStore
from state.records import MemoryEntry

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

ModelFactory = Callable[[str], "BaseChatModel"]
"""Returns the chat model for a mode (talk/work/deep/autonomous), temperature already clamped."""


@dataclass
class Deps:
    """What nodes need from the outside world."""

    instance: Instance
    config: Config
    store: MemoryStore
    model_for: ModelFactory
    kernel_log: list[MemoryEntry] = field(default_factory=list)
    vault: dict[str, str] = field(default_factory=dict)
    """Wrapped external content by digest: in memory only, for the turn it arrived in."""

    def flush_kernel_log(self) -> None:
        """Append buffered per-step ``kernel`` memories to the ledger."""
        pending, self.kernel_log = self.kernel_log, []
        if pending:
            self.store.journal.append_many(pending)

    @classmethod
    def for_instance(cls, instance: Instance, model_for: ModelFactory | None = None) -> Deps:
        """Build deps for an instance; the model factory defaults to the configured backend."""
        config = load_config(instance.config_file)
        store = MemoryStore.for_instance(instance, config)
        if model_for is None:
            from graph.llm import band_temperature, make_chat_model
            from state.counters import bump

            def model_for(mode: str) -> BaseChatModel:
                applied, clamped = band_temperature(config, mode)
                if clamped:
                    bump(instance.machine, "temperature_clamped_total", mode=mode)
                model = make_chat_model(config, mode=mode)
                band = config.temperature_bands.get(mode) or config.temperature_bands["talk"]
                actual = getattr(model, "temperature", applied)
                if actual is not None and not band.min <= float(actual) <= band.max:
                    bump(instance.machine, "temperature_out_of_band_total", mode=mode)
                return model

        return cls(instance=instance, config=config, store=store, model_for=model_for)
