"""Web content extraction benchmark: corpora, engines, runs and imported predictions.

- `corpus`            load + validate a corpus dir (ground-truth.json + html/<id>.html.gz)
- `corpus_format`     the corpus layout and its error
- `article_benchmark` the pinned upstream corpus: fetch it at the pin
- `article_benchmark_identity` which corpus is the pinned one; the drift checks
  (the offline demo corpus is collectors.demo.extraction_corpus)
- `anchors`           the ground-truth anchor rule and the text normaliser
- `engines`           one module per local extractor; `ENGINES` is the explicit registry
- `runner`            plan + resumable engine runs -> events
- `predictions`       import another system's predictions file -> events
- `run_state`         what the log already holds for a run; `RunSummary`
"""
