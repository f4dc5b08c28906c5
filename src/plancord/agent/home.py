"""An agent's home: its folder under the agents folder, and everything made from it.

Why this exists: the workspace, the private folders the host keeps beside it (what the
observer saw, the ignored files kept at a branch's start, the diffs it writes), the sandbox
policies an agent's processes run under and its execution branch were each rebuilt by hand
wherever they were needed; a part that built one of them differently (the branch without
its kept folder) broke Discard. Every part asks :class:`AgentHomes` for an agent's
:class:`AgentHome` instead, so there is one answer to each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from plancord.agent.execution.branch import ExecutionBranch
from plancord.agent.execution.branch_reading import RESULTS_DIR, BranchReading
from plancord.agent.execution.ignored import KEPT_DIR
from plancord.core.sandbox_policy import SandboxPolicy, SandboxSettings

WORKSPACE_DIR = "workspace"
OBSERVED_DIR = "observed"


@dataclass(frozen=True, slots=True)
class AgentHome:
    """One agent's folder (``<agents_dir>/<agent>``) and what lives in it.

    The workspace is the agent's; the other folders are the host's, never shown to an agent
    process. The policies take the operator's sandbox settings.
    """

    agent: str
    root: Path
    sandbox: SandboxSettings

    @property
    def workspace(self) -> Path:
        """The agent's git repository, where every file and shell tool is jailed."""
        return self.root / WORKSPACE_DIR

    @property
    def observed(self) -> Path:
        """The host's copies of what an executing call changed, to hold or undo it."""
        return self.root / OBSERVED_DIR

    @property
    def kept(self) -> Path:
        """The ignored files kept at a branch's start, which Discard puts back."""
        return self.root / KEPT_DIR

    @property
    def results(self) -> Path:
        """The diffs the host writes of a result."""
        return self.root / RESULTS_DIR

    @property
    def executing_policy(self) -> SandboxPolicy:
        """An agent process outside plan mode: the workspace writable, the network when
        the operator named this agent."""
        return self.sandbox.executing(self.agent, self.workspace)

    @property
    def read_only_policy(self) -> SandboxPolicy:
        """An agent process that only reads, and every process while planning."""
        return self.sandbox.read_only(self.workspace)

    @property
    def walled_policy(self) -> SandboxPolicy:
        """:attr:`read_only_policy` behind the Landlock inner wall too (plan mode's shell
        when the operator requires the wall)."""
        return self.sandbox.walled(self.workspace)

    @property
    def host_git_policy(self) -> SandboxPolicy:
        """The host's own git runs on this repository: the executing sandbox with the git
        directories writable."""
        return self.sandbox.host_git(self.agent, self.workspace)

    @property
    def branch(self) -> ExecutionBranch:
        """The agent's execution branch, as every part that touches it must have it: git in
        the host's git policy and the ignored files kept at start in this home, so Discard
        puts them back whoever calls it."""
        return ExecutionBranch(self.host_git_policy, kept=self.kept)

    @property
    def reading(self) -> BranchReading:
        """What the agent's execution branch holds, read as the branch's git runs: the
        diffs written in this home, so nothing the host writes lands in the workspace."""
        return BranchReading(self.host_git_policy, results=self.results)


@dataclass(frozen=True, slots=True)
class AgentHomes:
    """The agents folder (``Config.agents_dir``): each agent's home under it."""

    agents_dir: Path
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)

    def of(self, agent: str) -> AgentHome:
        return AgentHome(agent, self.agents_dir / agent, self.sandbox)
