"""The offline alternative, appended to errors that a default needing a key or network caused.

`bench run draco` defaults to an LLM judge and `bench run simpleqa` to downloading the pinned
test set; a user without a key or a network should learn what runs without them, not just what
is missing.
"""

from __future__ import annotations

from collections.abc import Sequence

from collectors.http.keys import MissingApiKey
from collectors.pinned import PinError

DRACO_COMMANDS = ("draco", "rejudge")
QA_COMMANDS = ("simpleqa", "qa")


def _command_words(argv: Sequence[str]) -> set[str]:
    return {word for word in argv if not word.startswith("-")}


def _missing_key(exc: BaseException) -> bool:
    # The provider layer and the LLM backends each raise their own type for this (and both are
    # being reworked); what they share is naming the unset variable.
    text = str(exc)
    return isinstance(exc, MissingApiKey) or ("_KEY" in text and "not set" in text)


def _download_failed(exc: BaseException) -> bool:
    return "download failed" in str(exc) or isinstance(exc.__cause__, PinError)


def offline_hint(exc: BaseException, argv: Sequence[str]) -> str | None:
    """One line naming the option that avoids the failure, or None when there is none."""
    words = _command_words(argv)
    if _missing_key(exc):
        if words & set(DRACO_COMMANDS):
            return (
                "no key? the offline judge needs none: add `--judge offline` "
                "(e.g. bench run draco --tasks demo --systems local-rag --judge offline)"
            )
        if words & set(QA_COMMANDS):
            return (
                "no key? offline lanes and roles need none: --lanes local-bm25,closed-book "
                "--synthesizer offline --grader offline --relevance-judge offline"
            )
        return None
    if _download_failed(exc):
        if "simpleqa" in words:
            return (
                "offline? pass a local copy: --dataset-file simple_qa_test_set.csv "
                "(verified by sha256), or run your own questions: bench run qa --questions FILE"
            )
        if "draco" in words:
            return (
                "offline? pass a local copy: --dataset-file test.jsonl (verified by sha256), "
                "or run the project's own tasks: --tasks demo"
            )
    return None
