"""The benchmark harness: datasets (synthetic and external), methods, metrics and reports."""
