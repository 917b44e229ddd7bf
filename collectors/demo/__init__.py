"""The demo's own content, generated offline and pinned by sha256: the rubric tasks the offline
DRACO lanes answer (draco_tasks.py) and the extraction corpus they and the local QA lane
retrieve over (extraction_corpus.py). Product code: `bench demo` runs on it with no network and
no keys; the families' loaders read it like any user file."""
