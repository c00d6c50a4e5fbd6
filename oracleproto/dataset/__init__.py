"""Dataset layer: source DB reading, validation, building, admission."""
