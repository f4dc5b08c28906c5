"""Attacks played end to end: a scripted model issuing hostile tool calls through the real bot."""
