"""What the judge is asked, by task name: :data:`TASKS` gathers the tasks of every kind of label
(:mod:`ctxeval._judge.kinds`, one module per kind: its prompts, reply shapes and offline rules);
:class:`~.prompt.Task`, the fences and the repair turn live in :mod:`.prompt`, the reply shapes
(parser, schema, repair shape and the prompt's last sentence, declared once) in :mod:`.reply`."""

from __future__ import annotations

from .kinds import TASKS
from .prompt import Task, fence, repair
from .reply import ParseError

__all__ = ["TASKS", "ParseError", "Task", "fence", "repair"]
