"""Settings: the model and its sources, checks and grid, run config files, init templates, display names."""
