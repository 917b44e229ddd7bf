"""The LLM rubric judge (methodology §1.2): one call per criterion per sample, strict parsing.

- Each sample is its own call with no shared context; the prompt (`draco-judge@1`) gives the
  criterion type and what MET means for it: for a NEGATIVE criterion MET means the report
  *commits* the described error (warning against it is not MET).
- The completion must hold one JSON object `{"verdict": "MET"|"UNMET", "justification": ...}`,
  possibly inside ```json fences or around prose; the verdict must be exactly MET or UNMET
  (any case). Several objects are fine only if they agree.
- Unparsable: ONE re-ask (the conversation so far plus the prompt file's re-ask message).
  Still unparsable: outcome "unparsed", `met` = the verdict least favourable to the system
  (UNMET for a positive criterion, MET for a negative one) — never the other way (§5.1).
- Transport failure after the SDK's bounded retries: outcome "failed", least favourable `met`,
  error class and message recorded; the runner retries it on resume. Auth errors (401/402/403)
  and configuration errors propagate: nothing more can be judged.

`judge_id` names the regime (§1.2): provider:model, base URL when not the provider's default,
prompt sha256 (first 8 hex), samples, temperature, max_tokens. Scores are comparable only
within one judge_id.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal

from collectors.draco.judge_defaults import (
    DEFAULT_JUDGE_MODEL,
    DEFAULT_JUDGE_PROVIDER,
    DEFAULT_JUDGE_SPEC,
)
from collectors.draco.model import Criterion, Judge, JudgeSample, RubricTask
from collectors.draco.offline_judge import OfflineJudge
from collectors.draco.prompts import JUDGE_PROMPT_ID, load_prompt
from collectors.http.redaction import Redactor
from collectors.llm import LlmCallError, LlmClient, LlmConfigError, make_backend
from warehouse.events import JudgeRegimeRegistered, LlmCallRecord, SystemRef

DEFAULT_SAMPLES = 3
DEFAULT_MAX_TOKENS = 1024
OFFLINE = "offline"

# A base URL equal to the provider's default adds nothing to the regime name.
DEFAULT_BASE_URLS = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
}
CRITERION_TYPES = {"positive": "POSITIVE", "negative": "NEGATIVE"}
PARSE_RULE = (
    "every JSON object with a 'verdict' key, fenced or not; verdict exactly MET|UNMET (any "
    "case); all must agree; else one re-ask, then unparsed -> least favourable"
)

Verdict = Literal["MET", "UNMET"]


def parse_verdict(completion: str | None) -> tuple[Verdict, str | None] | None:
    """(verdict, justification) from a judge completion, or None when it cannot be read."""
    text = completion or ""
    decoder = json.JSONDecoder()
    found: list[dict] = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict) and "verdict" in value:
            found.append(value)
        position = text.find("{", end)
    if not found:
        return None
    verdicts = set()
    for value in found:
        verdict = value["verdict"]
        if not isinstance(verdict, str) or verdict.strip().upper() not in ("MET", "UNMET"):
            return None
        verdicts.add(verdict.strip().upper())
    if len(verdicts) != 1:
        return None
    justification = found[0].get("justification")
    return verdicts.pop(), justification.strip() if isinstance(justification, str) else None


def llm_judge_id(
    provider: str,
    model: str,
    *,
    base_url: str | None,
    prompt_sha256: str,
    samples: int,
    temperature: float | None,
    max_tokens: int,
) -> str:
    parts = [f"{provider}:{model}"]
    if base_url and base_url.rstrip("/") != DEFAULT_BASE_URLS.get(provider):
        # Credentials in the authority or a key-like query parameter never enter an id.
        parts.append(f"u={Redactor().url(base_url.rstrip('/'))}")
    parts += [
        f"p={prompt_sha256[:8]}",
        f"n={samples}",
        f"t={'default' if temperature is None else format(temperature, 'g')}",
        f"mt={max_tokens}",
    ]
    return "|".join(parts)


class LlmJudge:
    official = True

    def __init__(
        self,
        client: LlmClient,
        *,
        model: str = DEFAULT_JUDGE_MODEL,
        temperature: float | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        samples: int = DEFAULT_SAMPLES,
        provider_label: str | None = None,
    ):
        if samples < 1:
            raise LlmConfigError(f"judge samples must be >= 1, got {samples}")
        self.client = client
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.samples = samples
        self.provider_label = provider_label or client.provider
        self.prompt = load_prompt(JUDGE_PROMPT_ID)
        self.prompt_id = self.prompt.prompt_id
        self.prompt_sha256 = self.prompt.sha256
        self.judge_id = llm_judge_id(
            self.provider_label,
            model,
            base_url=client.base_url,
            prompt_sha256=self.prompt_sha256,
            samples=samples,
            temperature=temperature,
            max_tokens=max_tokens,
        )

    def system_ref(self) -> SystemRef:
        settings = getattr(self.client, "settings", None)
        return SystemRef(
            name="draco-llm-judge",
            version="1",
            settings={
                "provider": self.client.provider,
                "provider_label": self.provider_label,
                **(settings() if callable(settings) else {"base_url": self.client.base_url}),
                "judge_id": self.judge_id,
                "model": self.model,
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
                "samples": self.samples,
                "prompt": {"id": self.prompt_id, "sha256": self.prompt_sha256},
                "parse_rule": PARSE_RULE,
                "max_reasks": 1,
            },
        )

    def render(self, task: RubricTask, criterion: Criterion, judged_text: str) -> str:
        return self.prompt.render(
            criterion_type=CRITERION_TYPES[criterion.polarity],
            met_meaning=self.prompt.section(f"met-{criterion.polarity}"),
            requirement=criterion.requirement,
            problem=task.problem,
            response=judged_text,
        )

    def _complete(self, messages: Sequence[dict[str, str]], judged_text: str) -> LlmCallRecord:
        # The judged text is stored once, in its report_normalized event: the recorded request
        # references it instead of holding one copy per criterion × sample (warehouse/bodies.py).
        return self.client.complete(
            messages,
            prompt=self.prompt.ref,
            model=self.model,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            stored_texts=(judged_text,),
        )

    def _reask_messages(self, text: str, first: LlmCallRecord) -> list[dict[str, str]]:
        reask = self.prompt.section("reask")
        if not first.raw_completion.strip():
            # APIs refuse an empty assistant turn: ask again in one user message instead.
            return [{"role": "user", "content": f"{text}\n\n{reask}"}]
        return [
            {"role": "user", "content": text},
            {"role": "assistant", "content": first.raw_completion},
            {"role": "user", "content": reask},
        ]

    def judge(
        self, task: RubricTask, criterion: Criterion, judged_text: str, *, sample: int
    ) -> JudgeSample:
        text = self.render(task, criterion, judged_text)
        calls: list[LlmCallRecord] = []
        reasks = 0
        try:
            calls.append(self._complete([{"role": "user", "content": text}], judged_text))
            parsed = parse_verdict(calls[-1].raw_completion)
            if parsed is None:
                reasks = 1
                calls.append(self._complete(self._reask_messages(text, calls[0]), judged_text))
                parsed = parse_verdict(calls[-1].raw_completion)
        except LlmCallError as exc:
            if exc.is_auth:
                raise
            return JudgeSample(
                outcome="failed",
                verdict=None,
                met=criterion.least_favourable_met,
                justification=None,
                reasks=reasks,
                llm=calls[-1] if calls else None,
                error_class=exc.error_class,
                error_message=str(exc),
                calls=tuple(calls),
            )
        if parsed is None:
            return JudgeSample(
                outcome="unparsed",
                verdict=None,
                met=criterion.least_favourable_met,
                justification=None,
                reasks=reasks,
                llm=calls[-1],
                calls=tuple(calls),
            )
        verdict, justification = parsed
        return JudgeSample(
            outcome="parsed",
            verdict=verdict,
            met=verdict == "MET",
            justification=justification,
            reasks=reasks,
            llm=calls[-1],
            calls=tuple(calls),
        )


def build_judge(
    spec: str = DEFAULT_JUDGE_SPEC,
    *,
    samples: int = DEFAULT_SAMPLES,
    temperature: float | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    max_retries: int = 2,
) -> Judge:
    """A judge from a command-line spec: `offline`, `anthropic:<model>`, `openai:<model>` or
    `openai-compatible:<model>@<base url>`. Raises LlmConfigError on a bad spec or missing key."""
    from collectors.llm.spec import parse_llm_spec

    parsed = parse_llm_spec(spec, option="--judge")
    if parsed is None:
        return OfflineJudge(samples=samples)
    client = make_backend(parsed.provider, base_url=parsed.base_url, max_retries=max_retries)
    return LlmJudge(
        client,
        model=parsed.model,
        temperature=temperature,
        max_tokens=max_tokens,
        samples=samples,
    )


class JudgePreflightError(RuntimeError):
    """The judge could not answer one trivial criterion: stop before any research is paid for."""


def preflight_judge(judge: Judge) -> JudgeSample:
    """One judge call on a trivial criterion (methodology §5.17: validate before spending).

    A refused key raises the backend's auth error; any other failed call raises
    JudgePreflightError. The call is not a verdict of any run and is not logged."""
    criterion = Criterion(
        criterion_id="preflight",
        axis="preflight",
        axis_title="Preflight",
        position=0,
        weight=1,
        requirement="The response says that the sky is blue.",
    )
    task = RubricTask(
        item_id="preflight",
        position=0,
        domain="preflight",
        problem="What colour is the sky on a clear day?",
        rubric_id="preflight",
        criteria=(criterion,),
    )
    sample = judge.judge(task, criterion, "The sky is blue on a clear day.", sample=1)
    if sample.outcome == "failed":
        raise JudgePreflightError(
            f"judge preflight failed ({sample.error_class}): {sample.error_message}"
        )
    return sample


def judge_regime_payload(
    judge: Judge, normalizer_version: str, argv: Sequence[str] = ()
) -> JudgeRegimeRegistered:
    return JudgeRegimeRegistered(
        judge_id=judge.judge_id,
        judge=judge.system_ref(),
        official=judge.official,
        prompt_id=judge.prompt_id,
        prompt_sha256=judge.prompt_sha256,
        samples=judge.samples,
        normalizer_version=normalizer_version,
        argv=list(argv),
    )


__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "DEFAULT_JUDGE_PROVIDER",
    "DEFAULT_JUDGE_SPEC",
    "DEFAULT_SAMPLES",
    "OFFLINE",
    "JudgePreflightError",
    "LlmJudge",
    "OfflineJudge",
    "build_judge",
    "judge_regime_payload",
    "llm_judge_id",
    "parse_verdict",
    "preflight_judge",
]
