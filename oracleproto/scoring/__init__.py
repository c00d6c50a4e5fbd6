"""The answer parser and how its mode is chosen."""
