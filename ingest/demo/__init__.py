"""The demo: the embedded fictional corpus, the simulated auditees, and `hindsight demo`."""
