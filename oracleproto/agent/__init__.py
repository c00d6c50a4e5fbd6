"""The time-masked ReAct loop (paper Algorithm 1)."""
