"""temporal-rag's benchmark (the ``temporal-rag-bench`` distribution of this repository, not part
of ``pip install temporal-rag``): ``temporal-rag bench`` compares temporal-rag with plain RAG and
the recency baselines of LangChain and LlamaIndex on one Chroma collection.

:mod:`~temporal_rag_bench.bench` runs a request, :mod:`~temporal_rag_bench.cli` is the command,
the generator and dataset readers make the timelines, the ``methods*`` and ``*_baselines``
modules are what is compared, and :mod:`~temporal_rag_bench.report` writes the report. See
docs/benchmark.md.
"""
