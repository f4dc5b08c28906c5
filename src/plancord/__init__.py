"""plancord: AI coding agents on Discord that plan before they act."""

__version__ = "0.1.0"
