"""Renderer R: user prompt from a question and the template family, plus runtime protocols."""
