"""The agent sandbox: every process an agent causes starts here, walled in.

``policy`` says what a process may reach (a value, and the argv that enforces it),
``environment`` and ``git_config`` what it starts with, ``landlock`` is the kernel wall used
inside bubblewrap while planning and as the fallback (``wall_helper`` builds the same inner
wall as a native program, so planning costs what executing costs), ``layers`` says which layer works
here, and ``runner`` starts the process off the event loop and makes sure nothing outlives
the call.
"""

from plancord.core.sandbox_policy import Layer, LayerChoice, Limits, SandboxPolicy
from plancord.sandbox.landlock import landlock_abi
from plancord.sandbox.layers import SandboxUnavailable, choose_layer, layer_in_use
from plancord.sandbox.process_run import ProcessResult
from plancord.sandbox.runner import (
    run_attached,
    run_sandboxed,
    run_shell,
)
from plancord.sandbox.wall_helper import native_wall

__all__ = [
    "Layer",
    "LayerChoice",
    "Limits",
    "ProcessResult",
    "SandboxPolicy",
    "SandboxUnavailable",
    "choose_layer",
    "landlock_abi",
    "layer_in_use",
    "native_wall",
    "run_attached",
    "run_sandboxed",
    "run_shell",
]
