"""The fake Messages API, by concept; ``plancord.testing.anthropic_server`` is its public face."""
