"""The bot process itself: its data directory checked before it connects, its secrets kept
from other processes, its garbage collector tuned, and an init when it runs as PID 1."""
