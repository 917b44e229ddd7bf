"""The default DRACO judge, in a module of its own: the CLI shows it in `-h` without importing
the judge (LLM clients, event models)."""

DEFAULT_JUDGE_PROVIDER = "anthropic"
DEFAULT_JUDGE_MODEL = "claude-sonnet-5"  # the Nimble DRACO harness's judge (methodology §1.5)
DEFAULT_JUDGE_SPEC = f"{DEFAULT_JUDGE_PROVIDER}:{DEFAULT_JUDGE_MODEL}"
