"""Executors that run the pipeline stages: chunked on one machine (local) or on Ray."""
