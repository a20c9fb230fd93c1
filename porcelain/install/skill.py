"""The skill ``ctx`` the hosts read: when and how an agent uses its memory."""

from __future__ import annotations

from ctx.engine import KINDS, LINK_TYPES

__all__ = ["SKILL_TEXT"]

_TIERS = ("pinned", "reference", "working", "off-context")

SKILL_TEXT = f"""---
name: ctx
description: Versioned project memory (ctx). Use it to recall what was decided, \
learned or left open before answering, and to remember decisions, facts and \
patterns worth keeping for later sessions and other agents.
---

# ctx: the project's memory

Every memory is a git commit that says who wrote it and why. The hooks give
you the memories that matter at the start of a session and with each prompt,
inside `<ctx:context>` blocks (never copy those back into memory).

## When to recall

- Before a decision, a design or a fix: what was decided, tried or ruled out.
- When the user refers to earlier work ("as we agreed", "the usual way").
- Use the MCP tool `recall` (or `search` to browse), or write
  `<ctx:recall query="how do we deploy?"/>`: the hits come with the next prompt.

## When to remember

- A decision and its reason, a fact about the project that is not in the
  code, a pattern to follow, an open question, a hypothesis being tested.
- One idea per memory, written to be understood without this conversation.
- Not secrets, not what the code or the git history already says.

Kinds: {", ".join(KINDS)}.

Tiers are tags: {", ".join("`tier:" + t + "`" for t in _TIERS)} (pinned
memories come first in every recall; off-context ones never do).

Link types: {", ".join(LINK_TYPES)}.

## Commands in your answer

Write these in an answer (not in a code block or a quote); they are carried
out when you stop, and what they return comes with the next prompt:

```
<ctx:remember type="decision" tags="project:x,tier:reference" title="..." \
context="...">text</ctx:remember>
<ctx:recall query="..." budget="800"/>
<ctx:summarize nodes="ID,ID" archive="true" title="...">summary</ctx:summarize>
<ctx:link from="ID" to="ID" type="DEPENDS_ON"/>
<ctx:supersede old="ID" new="ID"/>
<ctx:expand node="ID"/>
<ctx:status/>
```

A malformed command is not run; it is reported in the next context. The
MCP tools (`remember`, `recall`, `link`, `supersede`, `summarize`, ...) do
the same with a result at once.
"""
"""The skill file's text: front matter with its name and description, then
when to remember and recall, the kinds, tiers, link types and commands."""
