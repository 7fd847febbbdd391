"""Stage 4: what analysts read: the public-mart list (from dbt), read-only queries and exports,
the HindsightBench leaderboard and the static HTML report."""
