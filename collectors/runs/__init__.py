"""The one run kernel every benchmark family runs on.

- `kernel`    spec -> remaining units -> writer/sink -> stages -> terminal events -> RunFinished,
              with progress, cancellation, stop reasons and cost caps in one place
- `messages`  the one bound on stored error messages
- `summary`   the counters every run summary shares

A family (QA, DRACO, extraction, live extraction) supplies only its `RunStages`: what is left,
what one unit does, and how its state folds an appended event.
"""
