-- The scoring formulas of the marts as SQL text, rendered from the very macros the models call
-- but over named inputs instead of a model's columns. A reader that recomputes a score under
-- other settings (the app's what-if panels) runs these instead of restating them, so each
-- formula is written once, in dbt, and a change to a macro reaches the app with the next build
-- (issue #28). No events: like dim_scoring_vars, a row is the project's, not a measurement's.
{%- set weight_columns = {} -%}
{%- for name in extraction_weight_components() -%}
{%- do weight_columns.update({name: 'w_' ~ name}) -%}
{%- endfor -%}
{%- set formulas = [
    {
        'formula': 'extraction_composite',
        'kind': 'expression',
        'inputs': 'board: an extraction_leaderboard row (its component columns); w_<name>: the weight of each component',
        'sql': extraction_composite(weight_columns, 'board'),
    },
    {
        'formula': 'draco_weight_in_effect',
        'kind': 'expression',
        'inputs': 'weight: the override, else the registered weight; penalty_floor: NULL for none',
        'sql': floored_weight('weight', 'penalty_floor'),
    },
    {
        'formula': 'draco_rubric_term',
        'kind': 'expression',
        'inputs': 'weight: in effect; v_scored',
        'sql': rubric_term('weight', 'v_scored'),
    },
    {
        'formula': 'draco_rubric_mass',
        'kind': 'aggregate select list (raw_score, positive_weight)',
        'inputs': 'weighted_v: draco_rubric_term; weight: in effect; criterion_position',
        'sql': rubric_mass(),
    },
    {
        'formula': 'draco_rubric_score',
        'kind': 'expression',
        'inputs': 'raw_score, positive_weight: draco_rubric_mass',
        'sql': rubric_score('raw_score', 'positive_weight'),
    },
    {
        'formula': 'draco_score_mean',
        'kind': 'aggregate',
        'inputs': 'score: an item score, 0 for an item without a report; position, item_id',
        'sql': stable_avg('score', order_by='position, item_id'),
    },
    {
        'formula': 'umbrela_relevant',
        'kind': 'expression',
        'inputs': 'grade: a fct_qa_graded_chunks grade; threshold: the UMBRELA threshold',
        'sql': umbrela_relevant('grade', 'threshold'),
    },
    {
        'formula': 'umbrela_top_10_counts',
        'kind': 'aggregate select list (n_top_10, n_relevant_10)',
        'inputs': 'the fct_qa_graded_chunks rows of one unit (chunk_rank, grade); threshold: the UMBRELA threshold',
        'sql': umbrela_top_10_counts('threshold'),
    },
    {
        'formula': 'umbrela_llm_hit_10',
        'kind': 'expression',
        'inputs': 'n_relevant_10: umbrela_top_10_counts, NULL for a unit without chunks; relevance_measured: the unit is judged (a lane that searches, a run with a relevance judge)',
        'sql': umbrela_llm_hit_10('n_relevant_10', 'relevance_measured'),
    },
    {
        'formula': 'umbrela_llm_precision_10',
        'kind': 'expression',
        'inputs': 'n_relevant_10, n_top_10: umbrela_top_10_counts, NULL for a unit without chunks; relevance_measured: as for umbrela_llm_hit_10',
        'sql': umbrela_llm_precision_10('n_relevant_10', 'n_top_10', 'relevance_measured'),
    },
    {
        'formula': 'qa_landed_mean',
        'kind': 'aggregate',
        'inputs': 'value: a per-question metric of a fct_qa_answers row; landed, sample_order, item_id',
        'sql': qa_landed_mean('value'),
    },
    {
        'formula': 'qa_run_cost',
        'kind': 'expression',
        'inputs': 'usd_per_1k: the lane price; n_landed, n_failed: a qa_leaderboard row',
        'sql': qa_run_cost('usd_per_1k', 'n_landed', 'n_failed'),
    },
] %}

with

formulas as (

    {% for f in formulas %}
    select
        '{{ f.formula }}' as formula,
        '{{ f.kind }}' as kind,
        '{{ f.inputs | replace("'", "''") }}' as inputs,
        '{{ f.sql | trim | replace("'", "''") }}' as sql_text
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

)

select * from formulas
