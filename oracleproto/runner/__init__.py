"""Runner: task plan, admission first, concurrent channels, resume."""
