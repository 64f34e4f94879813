"""Generic judge-route types for imported checklists whose constraint ids ifpo does not know.

Video-IFBench's semantic constraints, for instance, come as a binary checklist query plus video
evidence (judge_context) under ids of their own; the importer keeps the original id in the
constraint's ``source_type`` field and files the constraint under ``checklist_item``.
"""

from __future__ import annotations

from ifpo.verifiers.registry import register_judge

register_judge(
    "checklist_item",
    source="generic",
    dimension="content",
    description="A binary checklist question answered by the judge (the constraint text is the question).",
)
