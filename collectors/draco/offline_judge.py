"""A keyless, deterministic stand-in for the rubric judge: lexical overlap, no network.

It exists so the offline demo and the tests run the whole DRACO pipeline anywhere. It is NOT
the benchmark's judge and says so everywhere: `official = False`, provider "offline", and its
`judge_id` (`offline-lexical-judge@1|n=<samples>`) is a regime of its own, never ranked next
to an LLM judge.

Rule (`METHOD`, whose sha256 stands in for a prompt hash): the requirement's content words
(lowercased alphanumeric tokens, stopwords and rubric verbs such as "states" or "explains"
dropped, a light suffix stem) are looked up in the judged text's words.

- POSITIVE criterion: MET when at least half (`POSITIVE_MET_SHARE` = 0.5) of them occur.
- NEGATIVE criterion: MET (the report "commits the error") when at least three quarters
  (`NEGATIVE_MET_SHARE` = 0.75) of the described error's content words occur. The bar is
  higher because a good report shares the topic words of an error it never makes; only a
  text that repeats the error's specific wording trips it. Crude, and fine for a demo.

Samples. Without a seed every sample of the same input is identical (the rule is deterministic).
With a seed (`OfflineJudge(samples, seed=S)`, judge_id `...|n=<samples>|seed=<S>`), sample 1 is
still the plain rule and every later sample moves the bar by an offset drawn uniformly from
[-`SAMPLE_JITTER`, +`SAMPLE_JITTER`] by a PRNG keyed on sha256(seed, task, criterion, sample):
a criterion whose share sits near the bar can get MET in one sample and UNMET in another, as an
LLM judge's samples disagree on borderline criteria. The same seed gives the same verdicts on
every rerun; it is recorded in the judge's settings. Still not a judge: a labelled imitation of
sampling noise, so the pages that show disagreement have something to show offline.

Each verdict carries
an `LlmCallRecord` with provider "offline" (like the QA offline roles), whose raw completion
is the verdict JSON, so offline verdict rows have the same shape as LLM ones.
"""

from __future__ import annotations

import functools
import json
import random
import re
import time

from collectors.draco.model import Criterion, JudgeSample, RubricTask
from collectors.lexical import STOPWORDS
from warehouse.canonical import sha256_hex
from warehouse.events import LlmCallRecord, SystemRef

OFFLINE = "offline"
MODEL = "offline-lexical-judge@1"
POSITIVE_MET_SHARE = 0.5
NEGATIVE_MET_SHARE = 0.75
SAMPLE_JITTER = 0.2  # seeded samples after the first: the bar moves by at most this share

# Words that say what a criterion asks for, not what it is about.
_RUBRIC_WORDS_TEXT = """
    response report answer states state explains explain mentions mention describes describe
    discusses discuss notes note provides provide includes include identifies identify
    clearly correctly explicitly specific specifically accurately claims claim says say
    incorrectly falsely wrongly least must should e g eg etc ie vs via cites cite gives give
    shows show lists list refers refer illustrates illustrate concludes conclude
"""
RUBRIC_WORDS = frozenset(_RUBRIC_WORDS_TEXT.split())
METHOD = (
    f"{MODEL}: content words of the requirement (lowercase [a-z0-9]+ tokens, stopwords "
    f"[{' '.join(sorted(STOPWORDS))}] and "
    f"rubric words [{' '.join(sorted(RUBRIC_WORDS))}] dropped, suffix stem ing/ed/es/s keeping "
    ">= 3 letters) found in the judged text's words; positive: share >= "
    f"{POSITIVE_MET_SHARE} -> MET; negative: share >= {NEGATIVE_MET_SHARE} -> MET (the text "
    "commits the error); no content words -> UNMET"
)
_TOKEN = re.compile(r"[a-z0-9]+")
_SUFFIXES = ("ing", "ed", "es", "s")


def stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_stems(text: str) -> frozenset[str]:
    ignored = STOPWORDS | RUBRIC_WORDS
    return (
        frozenset(stem(token) for token in _TOKEN.findall(text.lower()) if token not in ignored)
        - ignored
    )


@functools.lru_cache(maxsize=16)
def _text_stems(text: str) -> frozenset[str]:
    # A report is judged once per criterion and sample: tokenise it once.
    return content_stems(text)


class OfflineJudge:
    official = False
    prompt_id = MODEL
    prompt_sha256 = sha256_hex(METHOD)

    def __init__(self, samples: int = 1, *, seed: int | None = None):
        if samples < 1:
            raise ValueError(f"judge samples must be >= 1, got {samples}")
        self.samples = samples
        self.seed = seed
        self.judge_id = f"{MODEL}|n={samples}" + ("" if seed is None else f"|seed={seed}")

    def bar_offset(self, task: RubricTask, criterion: Criterion, sample: int) -> float:
        """How far this sample moves the MET bar: 0 for sample 1 and without a seed."""
        if self.seed is None or sample <= 1:
            return 0.0
        key = f"{self.seed}|{task.item_id}|{criterion.criterion_id}|{sample}"
        draw = random.Random(sha256_hex(key)).random()
        return (2 * draw - 1) * SAMPLE_JITTER

    def system_ref(self) -> SystemRef:
        return SystemRef(
            name=MODEL,
            version="1",
            settings={
                "provider": OFFLINE,
                "official": False,
                "judge_id": self.judge_id,
                "samples": self.samples,
                "method": METHOD,
                "method_sha256": self.prompt_sha256,
                "positive_met_share": POSITIVE_MET_SHARE,
                "negative_met_share": NEGATIVE_MET_SHARE,
                **(
                    {}
                    if self.seed is None
                    else {
                        "seed": self.seed,
                        "sample_jitter": SAMPLE_JITTER,
                        "sampling": "sample 1: the plain rule; samples >= 2: the bar moved by "
                        "(2u - 1) x sample_jitter, u = random.Random(sha256_hex("
                        "'seed|item_id|criterion_id|sample')).random()",
                    }
                ),
            },
        )

    def judge(
        self, task: RubricTask, criterion: Criterion, judged_text: str, *, sample: int
    ) -> JudgeSample:
        started = time.perf_counter()
        wanted = content_stems(criterion.requirement)
        found = wanted & _text_stems(judged_text)
        share = len(found) / len(wanted) if wanted else 0.0
        threshold = NEGATIVE_MET_SHARE if criterion.polarity == "negative" else POSITIVE_MET_SHARE
        threshold = round(threshold + self.bar_offset(task, criterion, sample), 4)
        met = bool(wanted) and share >= threshold
        verdict = "MET" if met else "UNMET"
        justification = (
            f"{len(found)} of {len(wanted)} content words of the {criterion.polarity} "
            f"criterion occur in the text (share {share:.2f}, MET at >= {threshold})."
        )
        completion = json.dumps({"verdict": verdict, "justification": justification})
        record = LlmCallRecord(
            provider=OFFLINE,
            model=MODEL,
            prompt_id=self.prompt_id,
            prompt_sha256=self.prompt_sha256,
            raw_completion=completion,
            latency_ms=(time.perf_counter() - started) * 1000,
        )
        return JudgeSample(
            outcome="parsed",
            verdict=verdict,
            met=met,
            justification=justification,
            reasks=0,
            llm=record,
            calls=(record,),
        )
