"""The providers by prefix: `--model PREFIX:MODEL` makes its client through PROVIDERS[PREFIX].

A provider is one module that registers a factory, `(model, base_url, settings) -> Provider`, under
its prefix with `@register("prefix")`. The built-in ones are this package's modules; a provider
from another package registers the same way from a module named by an entry point in the group
`hindsight.providers` (in its pyproject.toml: `[project.entry-points."hindsight.providers"]`,
`myprefix = "mypackage.myprovider"`), imported the first time its prefix is asked for.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ingest.llm.providers.base import Completion, Settings

ENTRY_POINTS = "hindsight.providers"


class Provider(Protocol):
    """What the runners call: one completion per request, and a close at the end of a run."""
    provider: str                 # the prefix the provider was made by
    model: str
    base_url: str | None

    async def complete(self, messages: list[dict], settings: Settings, context: dict | None = None) -> Completion:
        """The model's reply to MESSAGES; CONTEXT holds what a simulator reads and a request never sends."""

    async def close(self) -> None:
        """Release the client's connections."""


Factory = Callable[[str, "str | None", "Settings"], Provider]
PROVIDERS: dict[str, Factory] = {}


def register(prefix: str) -> Callable[[Factory], Factory]:
    """Register FACTORY (a class or function taking model, base_url, settings) as provider PREFIX."""
    def add(factory: Factory) -> Factory:
        if PROVIDERS.get(prefix, factory) is not factory:
            raise ValueError(f"provider prefix {prefix!r} is already registered by {PROVIDERS[prefix]!r}")
        PROVIDERS[prefix] = factory
        return factory
    return add


def lookup(prefix: str) -> Factory | None:
    """The factory of PREFIX, importing the module an installed package names for it if need be."""
    if prefix not in PROVIDERS:
        for entry in entry_points(group=ENTRY_POINTS, name=prefix):
            importlib.import_module(entry.value.split(":")[0])
    return PROVIDERS.get(prefix)


def known_prefixes() -> list[str]:
    """Every prefix: the registered ones, and those installed packages name."""
    return sorted(set(PROVIDERS) | {entry.name for entry in entry_points(group=ENTRY_POINTS)})
