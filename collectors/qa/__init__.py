"""Question answering benchmarks: SimpleQA search lanes and user question sets.

- `dataset`          the shape every question source loads into; the simple-evals sampler
- `simpleqa`         the pinned SimpleQA CSV (sha256-checked; downloaded once into the cache)
- `question_sets`    user question sets (CSV / JSONL), validated and pinned like a dataset
- `pinned`           fetch a file only if it matches its pinned sha256
- `grader_template`  the official grader template, fetched at a pinned commit, read with ast
- `prompts/`         project-written prompts (synthesiser, closed-book, UMBRELA), by id + sha256
- `roles`            synthesiser / grader / relevance-judge protocols and LLM implementations
- `offline`          keyless stand-ins for the three roles, labelled provider "offline"
- `lanes`            the lane protocol; `local-bm25` and `closed-book`
- `local_corpus`     passages for `local-bm25` (a corpus directory or documents JSONL)
- `vendor_lanes`     the vendor search lanes (`collectors.search`) as runner lanes
- `lane_registry`    every lane by name: `available_lanes()`, `build_lanes()`
- `role_specs`       roles from CLI specs: offline | anthropic:M | openai:M | openai-compatible:M@URL
- `plan`             the frozen spec, run id, series numbering, calls and list-price cost
- `runner`           resumable staged work -> events (`run_qa`, `execute_plan`)
- `run_state`        what the log already holds for a run, stage by stage; series lookup
- `preflight`        one minimal call per lane and LLM role before a paid run
"""
