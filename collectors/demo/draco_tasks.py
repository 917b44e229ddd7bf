"""The project's own rubric tasks for the offline demo: DRACO's shape, answerable offline.

Six research problems about the Python language, each answerable from one topic of the demo
corpus (`collectors.demo.extraction_corpus`: `pydoc_data.topics` pages), which the offline
research lane retrieves over. Each rubric has DRACO's four sections in DRACO's order, positive
criteria a good report meets (weights 4-10) and one negative criterion: an error a bad report
would commit (weights -15 to -20), phrased in words a correct report would not repeat, so the
offline lexical judge does not mistake the topic's vocabulary for the error.

The set is generated, not read: `demo_task_jsonl()` renders the rows exactly as DRACO stores
them (`json.dumps` per row, the rubric double-encoded), and its sha256 pins the set. Nothing is
written to disk unless `write_demo_tasks` is called; loading the written file as a user rubric
task set gives the same tasks and sha256.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from collectors.draco.dataset import parse_rubric_jsonl
from collectors.draco.model import RubricTaskSet
from warehouse.canonical import sha256_hex

DEMO_NAME = "bench-demo-rubric"
DEMO_VERSION = "1"  # bump with any change to the tasks below
DEMO_URI = f"bench:{DEMO_NAME}@{DEMO_VERSION}"
# sha256 of `demo_task_jsonl()`; a test fails when the tasks change without a new version.
DEMO_SHA256 = "76406d957613ba3a7fc0184c28445a7de05ad5320f112ed5312b9196b3f0bbbf"
DEMO_DOMAIN = "Python Language"
_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/bench-warehouse/demo-rubric")

SECTIONS = (
    ("factual-accuracy", "Factual Accuracy"),
    ("breadth-and-depth-of-analysis", "Breadth and Depth of Analysis"),
    ("presentation-quality", "Presentation Quality"),
    ("citation-quality", "Citation Quality"),
)
FACTUAL, BREADTH, PRESENTATION, CITATION = (axis for axis, _ in SECTIONS)

# (slug, pydoc topic, problem, {axis: ((criterion id, weight, requirement), ...)})
_TASKS: tuple[tuple[str, str, str, dict[str, tuple[tuple[str, int, str], ...]]], ...] = (
    (
        "assert-statement-semantics",
        "assert",
        "How does Python's assert statement work? Explain its simple and extended forms and what "
        "each is equivalent to, and what happens to assertions when Python runs with "
        "optimization enabled. Conclude whether assert is a suitable way to validate input in "
        "production code.",
        {
            FACTUAL: (
                (
                    "simple-form-equivalent",
                    10,
                    "States that the simple form assert expression is equivalent to raising "
                    "AssertionError if the expression is false, guarded by __debug__",
                ),
                (
                    "extended-form-message",
                    8,
                    "Explains that in the extended form assert expression1, expression2 the "
                    "second expression is passed to AssertionError",
                ),
                (
                    "no-code-under-optimization",
                    10,
                    "States that no code is emitted for an assert statement when optimization is "
                    "requested with the -O command line option",
                ),
                (
                    "debug-builtin",
                    5,
                    "Notes that __debug__ is True under normal circumstances and that "
                    "assignments to __debug__ are illegal",
                ),
                (
                    "claims-asserts-survive-optimization",
                    -20,
                    "Claims that assertions are guaranteed to keep firing in optimized builds, "
                    "making them dependable safeguards for untrusted input",
                ),
            ),
            BREADTH: (
                (
                    "production-validation-advice",
                    8,
                    "Concludes that since assertions can be disabled, production input "
                    "validation should raise explicit exceptions rather than rely on assert",
                ),
                (
                    "stack-trace-shows-expression",
                    5,
                    "Mentions that the source code of the failing expression is displayed as "
                    "part of the stack trace, so the error message need not repeat it",
                ),
            ),
            PRESENTATION: (
                (
                    "shows-both-forms",
                    5,
                    "Shows the assert statement grammar or a code example of both forms",
                ),
                ("summary-first", 4, "Opens with a short summary answer before the details"),
            ),
            CITATION: (
                ("cites-assert-reference", 8, "Cites the reference page for the assert statement"),
            ),
        },
    ),
    (
        "for-loop-execution",
        "for",
        "Explain how a Python for loop executes: how the iterable and its iterator are used, how "
        "the optional else clause interacts with break and continue, and what happens to the "
        "loop variable during and after the loop.",
        {
            FACTUAL: (
                (
                    "iterator-created-once",
                    10,
                    "States that the expression list is evaluated once and an iterator is "
                    "created for the resulting iterable object",
                ),
                (
                    "else-runs-when-exhausted",
                    10,
                    "Explains that the suite in the else clause is executed when the iterator "
                    "is exhausted",
                ),
                (
                    "break-skips-else",
                    10,
                    "States that a break statement terminates the loop without executing the "
                    "else clause",
                ),
                (
                    "continue-next-item",
                    8,
                    "Explains that a continue statement skips the rest of the suite and "
                    "continues with the next item",
                ),
                (
                    "claims-else-follows-break",
                    -15,
                    "Claims that the else block always fires afterwards, even when a break "
                    "exits early",
                ),
            ),
            BREADTH: (
                (
                    "loop-variable-overwritten",
                    8,
                    "Explains that assigning to the loop variable inside the suite does not "
                    "affect the loop because it is overwritten with the next item",
                ),
                (
                    "names-not-deleted",
                    6,
                    "Notes that names in the target list are not deleted when the loop is "
                    "finished and are never assigned if the sequence is empty",
                ),
                (
                    "range-example",
                    4,
                    "Gives range() as an example iterable, such as range(3) yielding 0, 1 and 2",
                ),
            ),
            PRESENTATION: (
                ("code-example", 5, "Includes a short code example of a for loop"),
                ("headed-sections", 4, "Organises the answer into sections with headings"),
            ),
            CITATION: (
                ("cites-for-reference", 8, "Cites the reference page for the for statement"),
            ),
        },
    ),
    (
        "boolean-operations-and-truthiness",
        "booleans",
        "Which values does Python treat as false in Boolean contexts, and what do the and, or "
        "and not operators actually return? Explain short-circuit evaluation and give a "
        "practical idiom that relies on it.",
        {
            FACTUAL: (
                (
                    "falsy-values",
                    10,
                    "Lists the values interpreted as false: False, None, numeric zero of all "
                    "types, and empty strings and containers",
                ),
                (
                    "and-returns-operand",
                    10,
                    "Explains that x and y first evaluates x, returns x if it is false, and "
                    "otherwise evaluates and returns y",
                ),
                (
                    "or-returns-operand",
                    10,
                    "Explains that x or y first evaluates x, returns x if it is true, and "
                    "otherwise evaluates and returns y",
                ),
                (
                    "not-returns-boolean",
                    8,
                    "States that not returns a boolean value regardless of the type of its "
                    "argument",
                ),
                (
                    "claims-and-or-coerce",
                    -20,
                    "Claims that and/or always coerce their outcome into a strict bool",
                ),
            ),
            BREADTH: (
                (
                    "custom-truth-value",
                    6,
                    "Mentions that user-defined objects can customize their truth value by "
                    "providing a __bool__() method",
                ),
                (
                    "default-value-idiom",
                    8,
                    "Gives the idiom s or 'foo' that replaces an empty string with a default value",
                ),
            ),
            PRESENTATION: (
                (
                    "example-per-operator",
                    5,
                    "Illustrates each operator with a small example expression",
                ),
            ),
            CITATION: (
                (
                    "cites-boolean-reference",
                    8,
                    "Cites the reference page on Boolean operations",
                ),
            ),
        },
    ),
    (
        "with-statement-context-managers",
        "context-managers",
        "What is a context manager in Python and how does the with statement use it? Describe "
        "the roles of __enter__ and __exit__, how an exception raised inside the block is "
        "handled or suppressed, and typical uses.",
        {
            FACTUAL: (
                (
                    "enter-binds-as-target",
                    10,
                    "States that the with statement binds the return value of __enter__() to "
                    "the target specified in the as clause",
                ),
                (
                    "exit-arguments",
                    10,
                    "Explains that __exit__() receives the exception type, value and traceback, "
                    "all None when the context was exited without an exception",
                ),
                (
                    "true-value-suppresses",
                    10,
                    "Explains that __exit__() suppresses the exception by returning a true value",
                ),
                (
                    "no-reraise",
                    5,
                    "Notes that __exit__() should not reraise the passed-in exception; this is "
                    "the caller's responsibility",
                ),
                (
                    "claims-truthy-exit-crashes",
                    -20,
                    "Claims that a truthy __exit__ result makes the program crash anyway",
                ),
            ),
            BREADTH: (
                (
                    "typical-uses",
                    8,
                    "Lists typical uses such as saving and restoring global state, locking and "
                    "unlocking resources, and closing opened files",
                ),
                (
                    "direct-invocation",
                    4,
                    "Notes that context managers can also be used by directly invoking their "
                    "methods",
                ),
            ),
            PRESENTATION: (
                (
                    "enter-exit-example",
                    5,
                    "Includes a code example of a with block or a class defining __enter__ and "
                    "__exit__",
                ),
            ),
            CITATION: (
                (
                    "cites-context-manager-reference",
                    8,
                    "Cites the reference page on with statement context managers",
                ),
                ("cites-pep-343", 6, "Refers to PEP 343, the specification of the with statement"),
            ),
        },
    ),
    (
        "raise-and-exception-chaining",
        "raise",
        "How does Python's raise statement work? Cover re-raising the active exception, raising "
        "a class versus an instance, explicit chaining with from, implicit chaining while an "
        "exception is being handled, and how to suppress the context.",
        {
            FACTUAL: (
                (
                    "bare-raise",
                    10,
                    "States that raise with no expression re-raises the active exception, and "
                    "raises RuntimeError if there is no active exception",
                ),
                (
                    "class-or-instance",
                    8,
                    "Explains that the expression must be a subclass or an instance of "
                    "BaseException, and a class is instantiated with no arguments",
                ),
                (
                    "from-sets-cause",
                    10,
                    "Explains that the from clause attaches the second exception to the raised "
                    "exception as the __cause__ attribute",
                ),
                (
                    "implicit-context",
                    10,
                    "Explains that a new exception raised while another is being handled gets "
                    "the previous exception attached as its __context__ attribute",
                ),
                (
                    "from-none-suppresses",
                    8,
                    "States that exception chaining can be explicitly suppressed by specifying "
                    "None in the from clause",
                ),
                (
                    "claims-from-none-destroys",
                    -15,
                    "Claims that from None deletes or discards the original exception object "
                    "entirely",
                ),
            ),
            BREADTH: (
                (
                    "traceback-attribute",
                    6,
                    "Mentions the writable __traceback__ attribute or the with_traceback() method",
                ),
                (
                    "version-3-11-change",
                    4,
                    "Notes the change in version 3.11: re-raising keeps a traceback modified in "
                    "an except clause",
                ),
            ),
            PRESENTATION: (
                (
                    "chaining-example",
                    5,
                    "Shows an example traceback or code for explicit and implicit chaining",
                ),
            ),
            CITATION: (
                ("cites-raise-reference", 8, "Cites the reference page for the raise statement"),
            ),
        },
    ),
    (
        "global-statement-scope",
        "global",
        "What does Python's global statement do? Explain when it is needed, the restrictions on "
        "the names listed in it, and its surprising interaction with exec() and eval().",
        {
            FACTUAL: (
                (
                    "declaration-for-block",
                    10,
                    "States that global is a declaration which holds for the entire current "
                    "code block, so the listed identifiers are interpreted as globals",
                ),
                (
                    "needed-to-assign",
                    10,
                    "Explains that assigning to a global variable is impossible without global, "
                    "while free variables may refer to globals without being declared",
                ),
                (
                    "name-restrictions",
                    8,
                    "Lists restrictions: listed names must not be used earlier in the same code "
                    "block, nor be defined as formal parameters or in a for target list",
                ),
                (
                    "parser-directive",
                    8,
                    "Explains that global is a directive to the parser that applies only to code "
                    "parsed at the same time as the global statement",
                ),
                (
                    "claims-private-copy",
                    -15,
                    "Claims that global gives each invocation its own private duplicate of the "
                    "variable",
                ),
            ),
            BREADTH: (
                (
                    "exec-eval-unaffected",
                    8,
                    "Explains that a global statement in a string passed to exec(), eval() or "
                    "compile() does not affect the code block containing the call",
                ),
                (
                    "cpython-not-enforced",
                    4,
                    "Mentions that CPython does not enforce some of these restrictions, but "
                    "programs should not abuse this freedom",
                ),
            ),
            PRESENTATION: (
                (
                    "function-example",
                    5,
                    "Includes a code example of a function that assigns to a global variable",
                ),
            ),
            CITATION: (
                ("cites-global-reference", 8, "Cites the reference page for the global statement"),
            ),
        },
    ),
)


def demo_item_id(slug: str) -> str:
    """A stable UUID per task, like DRACO's upstream ids."""
    return str(uuid.uuid5(_ID_NAMESPACE, slug))


# item id -> the pydoc topic (demo corpus page) that answers it
DEMO_TOPICS: dict[str, str] = {demo_item_id(slug): topic for slug, topic, _, _ in _TASKS}


def _row(slug: str, problem: str, sections: dict) -> dict[str, str]:
    rubric = {
        "id": slug,
        "sections": [
            {
                "id": axis,
                "title": title,
                "criteria": [
                    {"id": cid, "weight": weight, "requirement": requirement}
                    for cid, weight, requirement in sections[axis]
                ],
            }
            for axis, title in SECTIONS
        ],
    }
    # DRACO's exact row shape: four string fields, the rubric JSON-encoded inside `answer`.
    return {
        "id": demo_item_id(slug),
        "problem": problem,
        "answer": json.dumps(rubric),
        "domain": DEMO_DOMAIN,
    }


def demo_task_jsonl() -> bytes:
    rows = [_row(slug, problem, sections) for slug, _, problem, sections in _TASKS]
    return "".join(json.dumps(row) + "\n" for row in rows).encode("ascii")


def demo_task_set() -> RubricTaskSet:
    data = demo_task_jsonl()
    return RubricTaskSet(
        name=DEMO_NAME,
        uri=DEMO_URI,
        sha256=sha256_hex(data),
        revision=DEMO_VERSION,
        tasks=parse_rubric_jsonl(data, DEMO_URI),
    )


def write_demo_tasks(path: Path) -> Path:
    """Write the demo set as a JSONL file (a template for the user's own rubric tasks)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(demo_task_jsonl())
    partial.replace(path)
    return path


# --- an example results file for `bench import draco-results --format valyu` -----------------

DEMO_IMPORT_FILE = "demo_local-rag.eval.json"
DEMO_IMPORT_SYSTEM = "local-rag"
DEMO_IMPORT_JUDGE_MODEL = "offline-lexical-judge@1 (exported by bench demo as an example file)"


def demo_import_eval_json(verdicts: dict[tuple[str, str], bool]) -> bytes:
    """A grading file in valyu-benchmarks' `<system>.eval.json` shape (docs/imports.md) holding
    `verdicts` ({(task id, criterion id): met}, one judge run per task; every criterion of a
    task or the task is left out), with the header figures computed by valyu's own aggregation
    (docs/imports.md: per run normalized_score = clamp(sum w*[MET] / sum positive w, 0, 1),
    pass_rate = share of (w > 0 and MET) or (w < 0 and UNMET); overall and per-domain means).
    The demo fills it with the plain offline rule's verdicts on local-rag's demo reports and
    imports it, so the import page reproduces the file's figures and sets the imported regime
    beside ours. docs/examples/demo_local-rag.eval.json is the demo's file (a test holds it)."""
    results = []
    for task in demo_task_set().tasks:
        criteria = sorted(task.criteria, key=lambda c: c.position)
        if not all((task.item_id, c.criterion_id) in verdicts for c in criteria):
            continue
        met = [verdicts[(task.item_id, c.criterion_id)] for c in criteria]
        raw = sum(c.weight for c, m in zip(criteria, met, strict=True) if m)
        positive = sum(c.weight for c in criteria if c.weight > 0)
        score = round(min(1.0, max(0.0, raw / positive)), 6)
        passed = sum((c.weight > 0) == m for c, m in zip(criteria, met, strict=True))
        pass_rate = round(passed / len(criteria), 6)
        run = {
            "normalized_score": score,
            "pass_rate": pass_rate,
            "raw_score": raw,
            "criteria_results": [
                {
                    "requirement": c.requirement,
                    "weight": c.weight,
                    "verdict": "MET" if m else "UNMET",
                    "explanation": "exported verdict of the offline lexical rule",
                }
                for c, m in zip(criteria, met, strict=True)
            ],
        }
        results.append(
            {
                "id": task.item_id,
                "domain": task.domain,
                "normalized_score": score,
                "pass_rate": pass_rate,
                "provider": "offline",
                "model": DEMO_IMPORT_SYSTEM,
                "runs": [run],
            }
        )

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 6) if values else 0.0

    domains = sorted({r["domain"] for r in results})
    document = {
        "judge_model": DEMO_IMPORT_JUDGE_MODEL,
        "n_items": len(results),
        "runs_per_item": 1,
        "overall_score": mean([r["normalized_score"] for r in results]),
        "overall_pass_rate": mean([r["pass_rate"] for r in results]),
        "domain_scores": {
            d: mean([r["normalized_score"] for r in results if r["domain"] == d]) for d in domains
        },
        "domain_pass_rates": {
            d: mean([r["pass_rate"] for r in results if r["domain"] == d]) for d in domains
        },
        "results": results,
    }
    return (json.dumps(document, indent=1) + "\n").encode("utf-8")
