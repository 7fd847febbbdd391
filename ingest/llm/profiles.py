"""Sampling settings per request: the profile a requests-mart row carries (seeds/sampling_profiles.csv,
chosen per request kind by the dbt var `sampling_profiles`), or another profile of the same kind named
with `--profile`, with single fields overridden by the run's flags.

The profile sets what the protocol asks for (temperature, output tokens, JSON mode, reasoning effort
or thinking budget, samples); how a model takes it is seeds/model_capabilities.csv
(ingest/llm/capabilities.py), and raw.llm_calls records what was sent.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ingest.db import fetch_dicts
from ingest.errors import InputError
from ingest.llm.local_servers import require_window
from ingest.llm.providers import Settings

PROFILE_COLUMNS = ("sampling_profile", "temperature", "max_output_tokens", "response_format", "reasoning_effort",
                   "thinking_budget", "samples")


@dataclass(frozen=True)
class Overrides:
    """A run's flags: a profile to use instead of the rows' own, single sampling fields over it, and
    the transport settings (never part of a call's identity)."""
    profile: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    response_format: str | None = None
    reasoning_effort: str | None = None
    thinking_budget: int | None = None
    samples: int | None = None
    timeout: float = 120.0
    max_retries: int = 5
    api: str = "chat"
    context_window: int | None = None       # a local server's context, where it says it nowhere
    batch: object = None        # ingest.llm.batch.BatchOptions: submit through the provider's batch API

    def transport(self) -> Settings:
        """The settings a provider client is built with (timeouts, retries, endpoint, a stated context window)."""
        return Settings(timeout=self.timeout, max_retries=self.max_retries, api=self.api,
                        context_window=require_window(self.context_window))


def _from_profile(values: dict, base: Settings) -> Settings:
    def number(value, kind):
        return None if value is None else kind(value)

    return replace(base, profile=values.get("sampling_profile") or values.get("profile"),
                   temperature=number(values.get("temperature"), float),
                   max_tokens=int(values.get("max_output_tokens") or base.max_tokens),
                   response_format=values.get("response_format") or "text",
                   reasoning_effort=values.get("reasoning_effort") or None,
                   thinking_budget=number(values.get("thinking_budget"), int),
                   samples=int(values.get("samples") or 1))


class SettingsResolver:
    """Settings for each row of one request kind; the same profile values give the same (cached) object."""

    def __init__(self, con, kind: str, overrides: Overrides | None):
        self.overrides = overrides or Overrides()
        self.base = self.overrides.transport()
        self.named = None
        if self.overrides.profile:
            found = fetch_dicts(con, "select * from reference.sampling_profiles where profile = ?", [self.overrides.profile]) \
                if con.execute("select count(*) from information_schema.tables where table_schema = 'reference' "
                               "and table_name = 'sampling_profiles'").fetchone()[0] else []
            if not found:
                raise InputError("--profile", f"no sampling profile {self.overrides.profile!r} in the warehouse",
                                 "add a row to seeds/sampling_profiles.csv and run `hindsight build`, or pick one listed there")
            if found[0]["request_kind"] != kind:
                raise InputError("--profile", f"profile {self.overrides.profile!r} is for {found[0]['request_kind']} requests",
                                 f"pick a profile whose request_kind is {kind}")
            self.named = found[0]
        self._cache: dict[tuple, Settings] = {}

    def __call__(self, row: dict) -> Settings:
        values = self.named or row
        key = tuple(values.get(column) for column in PROFILE_COLUMNS + ("profile",))
        if key not in self._cache:
            settings = _from_profile(values, self.base) if "max_output_tokens" in values else self.base
            flags = {field: getattr(self.overrides, flag) for field, flag in (
                ("temperature", "temperature"), ("max_tokens", "max_tokens"), ("response_format", "response_format"),
                ("reasoning_effort", "reasoning_effort"), ("thinking_budget", "thinking_budget"), ("samples", "samples"))
                if getattr(self.overrides, flag) is not None}
            self._cache[key] = replace(settings, **flags)
        return self._cache[key]
