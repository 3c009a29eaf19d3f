"""Frozen values: types, atoms, domains, problems, ground actions and plans; the rule
for run ids."""

from plansmith.model._ask import (
    ANSWER_TYPES,
    AnswerSchema,
    AnswerValue,
    AskSpec,
    answer_from_text,
    answer_json_schema,
    answer_key,
    answer_schema_from_json,
    answered_schema,
    check_answer,
)
from plansmith.model._canonical import JSONValue, canonical_json, canonical_value, content_hash
from plansmith.model._domain import (
    ActionSchema,
    Axiom,
    ConditionalEffect,
    Domain,
    Method,
    NamedGoal,
    Number,
    Ordered,
    Parallel,
    Predicate,
    TaskCall,
    TaskSchema,
    Tier,
    axiom_strata,
)
from plansmith.model._ground import GroundAction, State
from plansmith.model._logic import (
    OMIT_DEFAULT,
    ROOT_TYPE,
    Atom,
    Condition,
    Equality,
    Formula,
    GoalPart,
    Literal,
    TypedName,
    TypeHierarchy,
    either_type,
)
from plansmith.model._plan import (
    PLAN_FORMAT,
    PLAN_FORMAT_VERSION,
    DecompositionNode,
    Plan,
    SettingValue,
    Step,
    StepArg,
)
from plansmith.model._problem import Problem
from plansmith.model._pydomain import PyCallable, PyDomain, PyProblem
from plansmith.model._run_id import RUN_ID_FORM, RUN_ID_MAX_LENGTH, RUN_ID_PATTERN, check_run_id

__all__ = [
    # ask actions
    "ANSWER_TYPES",
    "AnswerSchema",
    "AnswerValue",
    "AskSpec",
    "answer_from_text",
    "answer_json_schema",
    "answer_key",
    "answer_schema_from_json",
    "answered_schema",
    "check_answer",
    # logic
    "ROOT_TYPE",
    "Atom",
    "Literal",
    "Equality",
    "Condition",
    "TypedName",
    "TypeHierarchy",
    "either_type",
    "OMIT_DEFAULT",
    # domains and problems
    "Number",
    "Tier",
    "Predicate",
    "ActionSchema",
    "ConditionalEffect",
    "Axiom",
    "axiom_strata",
    "Formula",
    "GoalPart",
    "TaskCall",
    "Ordered",
    "Parallel",
    "Method",
    "TaskSchema",
    "NamedGoal",
    "Domain",
    "Problem",
    # Python-function (GTPyhop-style) domains
    "PyCallable",
    "PyDomain",
    "PyProblem",
    # ground
    "State",
    "GroundAction",
    # plans
    "PLAN_FORMAT",
    "PLAN_FORMAT_VERSION",
    "SettingValue",
    "StepArg",
    "Step",
    "DecompositionNode",
    "Plan",
    # run ids
    "RUN_ID_MAX_LENGTH",
    "RUN_ID_PATTERN",
    "RUN_ID_FORM",
    "check_run_id",
    # canonical JSON
    "JSONValue",
    "canonical_value",
    "canonical_json",
    "content_hash",
]
