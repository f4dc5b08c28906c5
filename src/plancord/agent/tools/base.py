"""What a tool is: a name, a ``ToolKind``, a pydantic input model and an async ``run``.

The registry refuses to start with a tool that has no ``ToolKind`` (the gate could not decide
on it) or a name the Messages API would reject. Tools never check the phase themselves: the
gate (``plancord.core.gate``) decides before ``run`` is called, and passes its verdict in the
``ToolContext``; every process a tool starts runs in the sandbox ``ToolContext.policy`` names.
"""

from __future__ import annotations

import functools
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from plancord.core.gate import ToolKind
from plancord.core.holding import KnownWrites
from plancord.core.planning import Actor, Phase
from plancord.core.sandbox_policy import LayerChoice, SandboxPolicy, SandboxSettings
from plancord.core.shell.readonly.operator_rules import OperatorRule

if TYPE_CHECKING:
    from plancord.core.agents import AgentRecord
    from plancord.core.ports import Notifier
    from plancord.core.service import PlanningService
    from plancord.core.shell.readonly import Verdict
    from plancord.storage.store import SqlStore

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

InputT = TypeVar("InputT", bound=BaseModel)


class StrictInput(BaseModel):
    """A tool's input model that refuses unknown fields."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True, slots=True)
class ToolResult:
    content: str
    is_error: bool = False

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(message, is_error=True)


@dataclass(frozen=True, slots=True)
class ShellSettings:
    timeout_seconds: float = 60.0
    max_output_bytes: int = 100_000
    operator_rules: tuple[OperatorRule, ...] = ()
    """The operator's ``shell.read_only_rules``, deciding the commands they name."""


@dataclass(slots=True)
class ToolContext:
    """Everything a tool may use for one call. Built by the runtime per call."""

    agent: AgentRecord
    workspace: Path
    phase: Phase
    planning: PlanningService
    store: SqlStore
    notifier: Notifier
    requester: Actor | None = None
    interactive: bool = True
    inner_wall: bool = False
    """Whether a read-only process of this call runs behind the Landlock inner wall too
    (plan mode's shell when the operator requires it)."""
    shell: ShellSettings = field(default_factory=ShellSettings)
    ask_timeout_seconds: float = 600.0
    sandbox_settings: SandboxSettings = field(default_factory=SandboxSettings)
    verdict: Verdict | None = None
    """The read-only filter's verdict on this call, for shell tools: when it allowed the
    command, its ``script`` (what the filter judged) is what the tool must run."""
    shared_writable: tuple[Path, ...] | None = None
    """While a plan executes: the shared directories (``sandbox.shared_paths``) the current
    step names, the only ones its processes may write; None outside execution."""
    stopped: Callable[[], bool] = lambda: False
    """Whether the turn this call belongs to was asked to stop (Stop, Cancel): a tool that
    runs many steps (a sub-agent) checks it between them."""

    @property
    def policy(self) -> SandboxPolicy:
        """The sandbox every process of this call runs in: :attr:`read_only_policy` while
        planning, the executing sandbox otherwise (the shared directories the current step
        does not name read-only while a plan executes)."""
        if self.phase.is_planning:
            return self.read_only_policy
        return self.sandbox_settings.executing(
            self.agent.name, self.workspace, shared_writable=self.shared_writable
        )

    @property
    def git_policy(self) -> SandboxPolicy:
        """The sandbox of the git tools' own runs: :attr:`policy` with the git directories
        writable (every other process sees them read-only). Only fixed git argv, with no
        hooks and the allow-listed config, run in it."""
        return self.policy.for_host_git()

    @property
    def read_only_policy(self) -> SandboxPolicy:
        """The sandbox of a process that runs because it only reads (a read-only tool, a
        command the filter judged read-only): the workspace read-only and no network in every
        phase, behind the Landlock inner wall too when :attr:`inner_wall`."""
        if self.inner_wall:
            return self.sandbox_settings.walled(self.workspace)
        return self.sandbox_settings.read_only(self.workspace)


def holds_read_only(policy: SandboxPolicy) -> bool:
    """Whether a process under ``policy`` is kept from writing by a wall: a sandbox layer
    (``sandbox.layer`` not ``off``) or the plan-mode shell's Landlock inner wall. Without
    either, ``writable=False`` is only a wish."""
    return not policy.writable and (policy.layer is not LayerChoice.OFF or policy.inner_wall)


def hides_host(policy: SandboxPolicy) -> bool:
    """Whether a process under ``policy`` sees only the sandbox's view (the workspace and
    the system's programs), so a read anywhere else finds nothing: a sandbox layer
    (bubblewrap's view, Landlock's read allow-list). The plan-mode inner wall alone stops
    writes, not reads."""
    return policy.layer is not LayerChoice.OFF


class Tool(ABC, Generic[InputT]):
    name: ClassVar[str]
    description: ClassVar[str]
    kind: ClassVar[ToolKind]
    workspace_edit: ClassVar[bool] = False
    """The tool only edits files of the workspace (``create_file``, ``str_replace``): the
    ``standard`` permission profile runs it without asking, unless a call writes a file
    another tool guards (``guarded_as``)."""
    Input: ClassVar[type[BaseModel]]

    def schema(self) -> dict[str, Any]:
        """The tool as the Messages API wants it: name, description, input_schema."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": input_schema_of(self.Input),
        }

    def detail(self, args: InputT) -> str:
        """The ``<detail>`` of the action string ``tool:<name>:<detail>``."""
        return json.dumps(args.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)[:500]

    def guarded_as(self, args: InputT, workspace: Path) -> str | None:
        """The tool whose permission this call needs instead of its own, when it writes
        something another tool guards (``create_file`` on ``AGENTS.md``); None otherwise."""
        return None

    def writes(self, args: InputT, workspace: Path) -> KnownWrites | None:
        """What this call will write, when its arguments say so before it runs (the host
        then holds it to the plan's step before it runs); None when only observing the
        call can tell."""
        return None

    def shell_verdict(
        self,
        args: InputT,
        workspace: Path,
        rules: Sequence[OperatorRule] = (),
        read_only_wall: bool = True,
        view: bool = True,
    ) -> Verdict | None:
        """For shell tools: the read-only filter's verdict on this call as run in
        ``workspace``, with the operator's ``rules``, knowing whether a read-only wall will
        hold what it allows (``read_only_wall``) and whether the sandbox hides the host
        from what it reads (``view``, see :func:`hides_host`); None otherwise."""
        return None

    @abstractmethod
    async def run(self, args: InputT, ctx: ToolContext) -> ToolResult: ...


@functools.cache
def input_schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema, built by pydantic once per model class: it is a pure function
    of the class, and building it takes long enough (about 0.3 ms a tool) that doing it for
    every model request stalled the event loop under load. Callers must not mutate it."""
    return model.model_json_schema()


class ToolRegistryError(Exception):
    pass


class AgentTools(Protocol):
    """Tools one agent has beyond the shared ones (its MCP servers' tools)."""

    async def tools_for(self, agent: str) -> Sequence[Tool[Any]]:
        """The agent's own tools; raises a PlancordError when they cannot be had."""
        ...


class ToolRegistry:
    """The tools an agent has. Startup fails on an unclassified tool or a bad/duplicate name.

    What the model is shown is computed once: each tool's schema when the registry is made,
    one registry per set of agent-specific tools (shared by every agent with that set, made
    again when the set changes, e.g. an agent's MCP servers restart), and one schema list per
    filter. The lists a request carries are therefore identical from request to request and
    phase to phase, which keeps Anthropic's prompt cache valid.
    """

    def __init__(
        self, tools: Iterable[Tool[Any]], *, extensions: Sequence[AgentTools] = ()
    ) -> None:
        self._extensions = tuple(extensions)
        self._by_set: dict[tuple[Tool[Any], ...], ToolRegistry] = {}
        self._set_of: dict[str, tuple[Tool[Any], ...]] = {}
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools:
            name = getattr(tool, "name", None)
            if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
                raise ToolRegistryError(f"tool {tool!r} has an invalid name {name!r}")
            if not isinstance(getattr(tool, "kind", None), ToolKind):
                raise ToolRegistryError(
                    f"tool {name!r} declares no ToolKind; the gate cannot decide on it"
                )
            if name in self._tools:
                raise ToolRegistryError(f"two tools are named {name!r}")
            self._tools[name] = tool
        self._schemas: dict[str, dict[str, Any]] = {n: t.schema() for n, t in self._tools.items()}
        self._visible: dict[Callable[[Tool[Any]], bool] | None, list[dict[str, Any]]] = {}

    async def for_agent(self, agent: str) -> ToolRegistry:
        """The registry of ``agent``: these tools and, after them, the agent's own from the
        extensions. Agents with the same own tools (the same objects) share one registry;
        a registry no agent uses any more is dropped."""
        extra: tuple[Tool[Any], ...] = ()
        for extension in self._extensions:
            extra += tuple(await extension.tools_for(agent))
        previous = self._set_of.pop(agent, None)
        if extra:
            self._set_of[agent] = extra
        if previous is not None and previous != extra and previous not in self._set_of.values():
            del self._by_set[previous]
        if not extra:
            return self
        registry = self._by_set.get(extra)
        if registry is None:
            registry = ToolRegistry([*self._tools.values(), *extra])
            self._by_set[extra] = registry
        return registry

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    def __iter__(self) -> Any:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def schemas(self, visible: Callable[[Tool[Any]], bool] | None = None) -> list[dict[str, Any]]:
        """Schemas in a fixed order (registration order), optionally filtered by ``visible``.

        The list is worked out once per filter and kept, so ``visible`` must be a function
        defined once (a module-level function), not a new lambda per call. Callers get their
        own list but must not mutate the schemas in it.
        """
        kept = self._visible.get(visible)
        if kept is None:
            kept = [
                self._schemas[name]
                for name, tool in self._tools.items()
                if visible is None or visible(tool)
            ]
            self._visible[visible] = kept
        return list(kept)
