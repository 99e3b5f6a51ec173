"""A lead agent whose one tool is a researcher sub-agent, and their scripted model: asked
"research", the lead calls the researcher, which says so and calls the puppet."""

from __future__ import annotations

from agentos import AgentConfig
from agentos import ScriptedProvider
from agentos import SubAgent
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls


def lead_and_researcher(base: AgentConfig | None = None) -> tuple[AgentConfig, ScriptedProvider]:
    """The lead's configuration (``base``'s, with the researcher as its only tool)."""
    researcher = AgentConfig(name="researcher", system_prompt="researcher", tools=["puppet"])
    config = (base or AgentConfig()).model_copy(
        update={
            "system_prompt": "lead",
            "tools": [],
            "agents": {"researcher": SubAgent(agent=researcher)},
        }
    )
    provider = ScriptedProvider(
        (
            lambda r: r.system == "researcher",
            lambda r: tool_calls(("puppet", {"label": "flights"}), say="looking up flights"),
        ),
        (
            lambda r: last_user_text(r) == "research",
            lambda r: tool_calls(("researcher", {"task": "find flights"})),
        ),
        (lambda r: True, lambda r: text("On it.")),
    )
    return config, provider
