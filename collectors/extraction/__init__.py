"""Web content extraction benchmark: corpora, engines, runs and imported predictions.

- `corpus`            load + validate a corpus dir (ground-truth.json + html/<id>.html.gz)
- `article_benchmark` the pinned upstream corpus: verify every file, or fetch it at the pin
- `demo_corpus`       an offline demo corpus built from text shipped with Python
- `anchors`           the ground-truth anchor rule and the text normaliser
- `engines`           one module per local extractor; `ENGINES` is the explicit registry
- `runner`            plan + resumable engine runs -> events
- `predictions`       import another system's predictions file -> events
- `run_state`         what the log already holds for a run; `RunSummary`
"""
