-- The scoring vars in effect for this build (extraction, QA and deep research), validated by the macros that
-- consume them; recorded so every published score can be traced to the settings behind it.
{%- set validated = {
    'extraction_weights': extraction_weights(),
    'useful_success_threshold': number_var('useful_success_threshold', 0, 1),
    'bootstrap_seed': number_var('bootstrap_seed', 0),
    'bootstrap_samples': number_var('bootstrap_samples', 0),
    'latency_scale_s': number_var('latency_scale_s', 0, min_inclusive=false),
    'throughput_full_bytes': number_var('throughput_full_bytes', 0, min_inclusive=false),
    'non_content_rules_version': scoring_var('non_content_rules_version') | string,
    'draco_penalty_floor': draco_penalty_floor(),
    'draco_pass_threshold': draco_pass_threshold(),
    'draco_bootstrap_seed': number_var('draco_bootstrap_seed', 0),
    'draco_bootstrap_samples': number_var('draco_bootstrap_samples', 0),
    'draco_correction': draco_correction(),
} %}
{%- do non_content_rules() %}

with

scoring_vars as (

    {% for name in scoring_var_names() + qa_var_names() + draco_var_names() %}
    select
        '{{ name }}' as var_name,
        {{ sql_json_literal(validated[name] if name in validated else scoring_var(name)) }} as var_value
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

)

select * from scoring_vars
