"""Binding (pure): which live tool runs each plan step, with which arguments and policy."""

from plansmith.binding._ask import (
    ASK_SERVER,
    ASK_TOOL,
    ask_binding,
    is_ask_step,
)
from plansmith.binding._bind import PLACEHOLDER, StepKey, bind, merge_across_steps, step_key
from plansmith.binding._context import (
    ContextProducerMissingError,
    ContextRef,
    ContextReferenceError,
    ContextSyntaxError,
    ContextValueError,
    context_placeholders,
    parse_context,
    resolve_context,
)
from plansmith.binding._extract import check_jsonpath, extract, reads_json, simple_path, singular
from plansmith.binding._fact import (
    FactOutputMissingError,
    FactProducerMissingError,
    FactReferenceError,
)
from plansmith.binding._model import (
    Binding,
    Bindings,
    BoundPlan,
    BoundStep,
    StepPolicy,
    ToolCatalog,
    ToolSpec,
)
from plansmith.binding._read import load_bindings, parse_bindings
from plansmith.binding._refs import (
    EnvRef,
    FactRef,
    OutputRef,
    ParamRef,
    Ref,
    RunRef,
    find_refs,
    parse_ref,
    ref_text,
    template_at,
)
from plansmith.binding._render import as_text, render
from plansmith.binding._types import TypeCheck, type_checks, type_mismatch

__all__ = [
    "ASK_SERVER",
    "ASK_TOOL",
    "ask_binding",
    "is_ask_step",
    # model
    "StepPolicy",
    "Binding",
    "Bindings",
    "ToolSpec",
    "ToolCatalog",
    "BoundStep",
    "BoundPlan",
    # reading
    "load_bindings",
    "parse_bindings",
    # references
    "ParamRef",
    "OutputRef",
    "FactRef",
    "EnvRef",
    "RunRef",
    "Ref",
    "parse_ref",
    "ref_text",
    "find_refs",
    "template_at",
    "render",
    "as_text",
    # binding and extraction
    "bind",
    "FactReferenceError",
    "FactProducerMissingError",
    "FactOutputMissingError",
    # GTPyhop's ${context.NAME} placeholders in a step's arguments
    "ContextRef",
    "ContextReferenceError",
    "ContextSyntaxError",
    "ContextProducerMissingError",
    "ContextValueError",
    "parse_context",
    "context_placeholders",
    "resolve_context",
    "merge_across_steps",
    "step_key",
    "StepKey",
    "PLACEHOLDER",
    "extract",
    "check_jsonpath",
    "simple_path",
    "singular",
    "reads_json",
    # run-time type checks of arguments other steps fill
    "TypeCheck",
    "type_checks",
    "type_mismatch",
]
