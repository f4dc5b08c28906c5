"""The agent's tools and the one place their order is fixed.

The order of ``default_tools`` is the order of the tool schemas in every request; keeping it
fixed keeps the prompt cache valid from one request to the next.
"""

from __future__ import annotations

from typing import Any

from plancord.agent.tools.base import Tool, ToolRegistry
from plancord.agent.tools.files import (
    CreateFileTool,
    GlobTool,
    GrepTool,
    StrReplaceTool,
    ViewTool,
)
from plancord.agent.tools.git import GitDiffTool, GitLogTool, GitStatusTool
from plancord.agent.tools.git_write import (
    GitBranchTool,
    GitCheckoutTool,
    GitCommitTool,
    GitPushTool,
)
from plancord.agent.tools.interactive import AskUserTool
from plancord.agent.tools.plan import (
    CompletePlanTool,
    EnterPlanModeTool,
    SubmitPlanTool,
    UpdatePlanStepTool,
)
from plancord.agent.tools.selfedit import SelfEditDocsTool, SelfEditSystemPromptTool
from plancord.agent.tools.shell import BashExecuteTool


def default_tools() -> list[Tool[Any]]:
    """Every tool an agent has, in the fixed order their schemas are sent."""
    return [
        ViewTool(),
        GlobTool(),
        GrepTool(),
        BashExecuteTool(),
        CreateFileTool(),
        StrReplaceTool(),
        GitStatusTool(),
        GitDiffTool(),
        GitLogTool(),
        GitCommitTool(),
        GitBranchTool(),
        GitCheckoutTool(),
        GitPushTool(),
        SelfEditSystemPromptTool(),
        SelfEditDocsTool(),
        AskUserTool(),
        EnterPlanModeTool(),
        SubmitPlanTool(),
        UpdatePlanStepTool(),
        CompletePlanTool(),
    ]


def default_registry() -> ToolRegistry:
    return ToolRegistry(default_tools())
