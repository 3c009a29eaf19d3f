"""The drug target discovery domain's servers: eight MCP servers shaped like Augmented
Nature's public biomedical ones (Open Targets, UniProt, Reactome, KEGG, PDB, AlphaFold,
ChEMBL, PubMed), answering from a small shipped demonstration data set.

``public/<source>.json`` records each public server (repository, commit, licence, every
tool's name, description and inputSchema); ``data/<source>.json`` is the data set;
``server.py`` serves one source over stdio; ``servers.json`` starts the eight local
servers and ``servers-public.json`` the public ones. See docs/drug-target.md.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DOMAIN_DIR", "SOURCES"]

DOMAIN_DIR = Path(__file__).resolve().parent

#: the sources, in the order of the drug target discovery pipeline
SOURCES = ("opentargets", "uniprot", "reactome", "kegg", "pdb", "alphafold", "chembl", "pubmed")
