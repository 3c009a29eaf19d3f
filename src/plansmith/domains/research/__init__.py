"""The research domain: decompose a question, search several sources, verify, report.

The corpus MCP server lives in :mod:`plansmith.domains.research.corpus_server`
(it imports the MCP SDK, so it is not imported here). This package exports the
parts that need neither the SDK nor a runner: the question classifier and
problem writer, the evidence readers, the trace and the report writer. The
verifier is :mod:`plansmith.domains.research.verify`.
"""

from plansmith.domains.research._evidence import (
    evidence_from_fetch,
    evidence_from_hit,
    evidence_from_search,
    subject_of,
)
from plansmith.domains.research._explain import (
    EXPLAIN_SYSTEM_PROMPT,
    EXPLANATION_HEADING,
    MAX_PROPOSALS,
    MAX_RESEARCH_LLM_CALLS,
    PROPOSE_SYSTEM_PROMPT,
    ModelCall,
    ModelText,
    explanation_prompt,
    proposal_prompt,
    read_proposals,
    value_conflicts,
)
from plansmith.domains.research._index import index_source
from plansmith.domains.research._problem import (
    ResearchProblem,
    check_question,
    problem_for,
    problem_yaml,
    read_research_header,
    research_problem,
    source_object,
)
from plansmith.domains.research._questions import (
    DEFAULT_CRITERIA,
    MAX_QUESTION_BYTES,
    Question,
    QuestionKind,
    classify,
    split_parts,
    split_qualifier,
)
from plansmith.domains.research._report import Citation, Report, write_report
from plansmith.domains.research._source_types import (
    CONFIG_FILE,
    SOURCE_TYPES,
    check_source_folder,
    document_type,
    folder_type,
    weight,
)
from plansmith.domains.research._sources import (
    DOMAIN_DIR,
    DOMAIN_FILE,
    PLANTED_DIR,
    PYTHON_DOCS_EXCLUDES,
    PYTHON_DOCS_ROOTS,
    find_python_docs,
    server_config,
)
from plansmith.domains.research._subquestions import Budget, Decision, Subquestion, propose, select
from plansmith.domains.research._trace import (
    CallRecord,
    FollowUpRecord,
    ResearchTrace,
    SubquestionRecord,
    Usage,
)

__all__ = [
    # files and sources
    "DOMAIN_DIR",
    "DOMAIN_FILE",
    "PLANTED_DIR",
    "PYTHON_DOCS_ROOTS",
    "PYTHON_DOCS_EXCLUDES",
    "find_python_docs",
    "server_config",
    "index_source",
    "CONFIG_FILE",
    "SOURCE_TYPES",
    "folder_type",
    "document_type",
    "check_source_folder",
    "weight",
    # questions and problems
    "QuestionKind",
    "Question",
    "DEFAULT_CRITERIA",
    "classify",
    "split_parts",
    "split_qualifier",
    "MAX_RESEARCH_LLM_CALLS",
    "ModelCall",
    "ModelText",
    "EXPLAIN_SYSTEM_PROMPT",
    "EXPLANATION_HEADING",
    "explanation_prompt",
    "value_conflicts",
    "MAX_PROPOSALS",
    "PROPOSE_SYSTEM_PROMPT",
    "proposal_prompt",
    "read_proposals",
    "MAX_QUESTION_BYTES",
    "check_question",
    "Budget",
    "Subquestion",
    "Decision",
    "propose",
    "select",
    "ResearchProblem",
    "research_problem",
    "problem_yaml",
    "problem_for",
    "read_research_header",
    "source_object",
    # evidence, trace, report
    "evidence_from_hit",
    "evidence_from_search",
    "evidence_from_fetch",
    "subject_of",
    "CallRecord",
    "SubquestionRecord",
    "FollowUpRecord",
    "Usage",
    "ResearchTrace",
    "Citation",
    "Report",
    "write_report",
]
