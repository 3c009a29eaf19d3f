"""Drug target discovery (GTPyhop's ``drug_target_discovery``, scenario 1, with
plansmith's KEGG and compound actions and methods: 11 steps over all eight servers;
``--as-published``: the domain as published, 8 steps over seven servers) over the servers of
``plansmith.domains.drugtarget`` (real processes, stdio), as seed 002 ran it three times:

  1. plansmith cold: ``run_drug_target`` on a fresh engine, the servers started for the
     run and stopped after it (what ``plansmith demo drug-target`` does), three times;
  2. plansmith warm: one engine whose servers a ``WarmPools`` keeps between runs (what a
     long-lived face does), three runs after one that starts them;
  3. raw, the peer: an ``mcp`` SDK loop making the same calls (11, or 8) with the same
     arguments, each value taken from the answer before as the bindings' JSONPaths say,
     through its own ``mcp.Client`` sessions: cold (its servers started per run) and
     warm (sessions kept).

It prints each run's wall time, checks that the three runs of each kind have one step
structure (action, server, tool and what each step waited for), and prints plansmith's
time over the raw loop's (median against median), cold and warm.
Run: ``.venv/bin/python bench/bench_drug_target.py [--as-published]``.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from plansmith.domains.drugtarget import pipeline
from plansmith.engine import Engine
from plansmith.servers import WarmPools

SCENARIO = "scenario_1_breast_cancer"
ROUNDS = 3
PUBLISHED = "--as-published" in sys.argv[1:]
SERVER = str(Path(sys.executable).parent / "plansmith-drugtarget")


async def _plansmith_cold(home: Path) -> pipeline.DrugTargetRun:
    return await pipeline.run_drug_target(SCENARIO, home=home, as_published=PUBLISHED)


async def _plansmith_warm(home: Path) -> list[pipeline.DrugTargetRun]:
    engine = Engine(home)
    pools = WarmPools(home / "servers.log", idle_timeout=600)
    engine.pool_factory = pools.factory
    try:
        await pipeline.run_drug_target(
            SCENARIO, home=home, engine=engine, as_published=PUBLISHED
        )  # starts them
        return [
            await pipeline.run_drug_target(
                SCENARIO, home=home, engine=engine, as_published=PUBLISHED
            )
            for _ in range(ROUNDS)
        ]
    finally:
        await pools.aclose()
        engine.close()


def _json(result: Any) -> Any:
    return json.loads("".join(getattr(c, "text", "") for c in result.content) or "null")


async def _raw_pass(clients: dict[str, Client]) -> list[tuple[str, str]]:
    """The plan's calls, each argument from the answer before it (KEGG's two and ChEMBL's
    compounds unless ``--as-published``)."""
    calls: list[tuple[str, str]] = []

    async def call(server: str, tool: str, args: dict[str, Any]) -> Any:
        calls.append((server, tool))
        return _json(await clients[server].call_tool(tool, args))

    hits = await call("opentargets", "search_diseases", {"query": "breast cancer", "size": 5})
    disease = hits["data"]["search"]["hits"][0]["id"]
    summary = await call(
        "opentargets", "get_disease_targets_summary", {"diseaseId": disease, "size": 10}
    )
    gene = summary["topTargets"][0]["targetSymbol"]
    found = await call("uniprot", "search_by_gene", {"gene": gene, "organism": "human", "size": 5})
    accession = found["results"][0]["primaryAccession"]
    await call("reactome", "find_pathways_by_gene", {"gene": gene, "species": "Homo sapiens"})
    if not PUBLISHED:
        entry = found["results"][0]["uniProtKBCrossReferences"]
        kegg_gene = next(x["id"] for x in entry if x["database"] == "KEGG")
        links = await call(
            "kegg",
            "find_related_entries",
            {"source_db": "hsa", "target_db": "pathway", "source_entries": [kegg_gene]},
        )
        pathway = next(iter(links["links"].values()))
        await call("kegg", "get_pathway_info", {"pathway_id": pathway})
    await call("pdb", "search_by_uniprot", {"uniprot_id": accession, "limit": 10})
    await call("alphafold", "get_structure", {"uniprotId": accession, "format": "json"})
    chembl = await call("chembl", "search_by_uniprot", {"uniprot_id": accession, "limit": 10})
    if not PUBLISHED:
        target = chembl["targets"][0]["target_chembl_id"]
        await call("chembl", "get_target_compounds", {"target_chembl_id": target, "limit": 25})
    query = "breast cancer drug target therapeutic"
    await call("pubmed", "search_articles", {"query": query, "max_results": 10})
    return calls


async def _raw_clients(stack: AsyncExitStack) -> dict[str, Client]:
    # as published, scenario 1 calls no KEGG tool
    sources = [s for s in pipeline.SOURCES if s != "kegg" or not PUBLISHED]

    async def one(source: str) -> None:
        params = StdioServerParameters(command=SERVER, args=[source])
        clients[source] = await stack.enter_async_context(Client(params))

    clients: dict[str, Client] = {}
    for source in sources:  # sessions entered in one task: their scopes nest in order
        await one(source)
    return clients


async def _raw_cold() -> float:
    started = time.perf_counter()
    async with AsyncExitStack() as stack:
        await _raw_pass(await _raw_clients(stack))
    return time.perf_counter() - started


async def _raw_warm() -> list[float]:
    times = []
    async with AsyncExitStack() as stack:
        clients = await _raw_clients(stack)
        await _raw_pass(clients)  # the first pass, as plansmith's warm-up run
        for _ in range(ROUNDS):
            started = time.perf_counter()
            await _raw_pass(clients)
            times.append(time.perf_counter() - started)
    return times


async def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        cold = [await _plansmith_cold(home / "cold") for _ in range(ROUNDS)]
        warm = await _plansmith_warm(home / "warm")
        raw_cold = [await _raw_cold() for _ in range(ROUNDS)]
        raw_warm = await _raw_warm()
    runs = [*cold, *warm]
    bad = [r.run_id for r in runs if r.state != "succeeded" or r.failed_steps]
    structures = {r.structure() for r in runs}
    used = cold[0].findings.called()
    what = " as published" if PUBLISHED else ", with plansmith's KEGG and compound steps"
    print(
        f"drug target discovery, {SCENARIO}{what}: {len(cold[0].plan.steps)} steps,"
        f" {len(used)} servers ({', '.join(used)})"
    )
    for kind, done in (("cold", cold), ("warm", warm)):
        for r in done:
            print(f"  plansmith {kind}: {r.run_id} {r.state} in {r.seconds:.3f} s")
    print(f"  raw SDK cold: {', '.join(f'{t:.3f}' for t in raw_cold)} s")
    print(f"  raw SDK warm: {', '.join(f'{t:.3f}' for t in raw_warm)} s")
    print(f"  step structures across the {len(runs)} runs: {len(structures)} (1 = the same)")
    for kind, ours, raw in (
        ("cold", [r.seconds for r in cold], raw_cold),
        ("warm", [r.seconds for r in warm], raw_warm),
    ):
        mine, theirs = statistics.median(ours), statistics.median(raw)
        print(
            f"  {kind}: plansmith {mine:.3f} s, raw {theirs:.3f} s: plansmith/raw = "
            f"{mine / theirs:.2f}x (median against median)"
        )
    if bad or len(structures) != 1:
        print(f"  FAILED: runs not succeeded {bad}; structures {len(structures)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(anyio.run(main))
