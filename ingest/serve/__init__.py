"""Serving readers: the published snapshots of the public marts and the serving file over them."""
